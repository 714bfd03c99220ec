import Foundation
import TestSupport
import Testing

@testable import RichPush

/// Finding and reading the extensions' Info.plist files: XML and binary, and every way they go wrong.
@Suite struct AppConfigurationTests {
    /// Messages spell settings as the command line does, as users read them.
    init() { useCommandLineSpelling() }

    static let app = Fixtures.root + "/Samples/app"

    @Test func scansTheSampleAppForItsExtensions() throws {
        let configuration = try AppConfiguration.scan(folder: Self.app)
        #expect(configuration.servicePlist == Self.app + "/NotificationService/Info.plist")
        #expect(configuration.transportSecurity.exceptions.map(\.domain) == ["media.example.com"])
        #expect(!configuration.transportSecurity.allowsArbitraryLoads, "the app's own plist does not apply")
        let names = configuration.contentExtensions.map(\.name).sorted()
        #expect(names == ["NotificationContent", "PersonalizedContent"])
        let personalized = try #require(configuration.contentExtensions.first { $0.name == "PersonalizedContent" })
        #expect(personalized.categories == ["personalized"], "read from a binary plist")
        let game = try #require(configuration.contentExtensions.first { $0.name == "NotificationContent" })
        #expect(game.categories == ["match_game", "trivia"])
        #expect(game.userInteractionEnabled && game.defaultContentHidden && game.initialContentSizeRatio == 0.6)
    }

    @Test func readsPlistsGivenOneByOne() throws {
        let configuration = try AppConfiguration(
            servicePlist: Self.app + "/NotificationService/Info.plist",
            contentPlists: [Self.app + "/PersonalizedContent/Info.plist"])
        #expect(configuration.contentExtensions.count == 1)
        #expect(configuration.transportSecurity.exception(for: "media.example.com") != nil)
    }

    @Test func refusesAPlistGivenToTheWrongFlag() {
        #expect {
            try AppConfiguration(servicePlist: Self.app + "/NotificationContent/Info.plist", contentPlists: [])
        } throws: { error in
            "\(error)".contains("content-extension") && "\(error)".contains("--service-plist")
        }
        #expect {
            try AppConfiguration(servicePlist: nil, contentPlists: [Self.app + "/NotificationService/Info.plist"])
        } throws: { error in
            "\(error)".contains("--content-plist")
        }
    }

    @Test func namesAMalformedOrMissingPlist() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let broken = folder + "/Broken/Info.plist"
        try FileManager.default.createDirectory(atPath: folder + "/Broken", withIntermediateDirectories: true)
        try Data("<plist><dict><key>x</key>".utf8).write(to: URL(fileURLWithPath: broken))
        #expect {
            try AppConfiguration.scan(folder: folder)
        } throws: { error in
            "\(error)".hasPrefix(broken) && "\(error)".contains("not a property list")
        }
        #expect {
            try AppConfiguration(servicePlist: folder + "/missing.plist", contentPlists: [])
        } throws: { error in
            "\(error)".contains("missing.plist") && "\(error)".contains("cannot be read")
        }
    }

    @Test func saysWhatItLookedForInAFolderWithoutExtensions() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/App", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Self.app + "/RichPushDemo/Info.plist", toPath: folder + "/App/Info.plist")
        #expect {
            try AppConfiguration.scan(folder: folder)
        } throws: { error in
            "\(error)".contains("com.apple.usernotifications.service") && "\(error)".contains("1 Info.plist")
        }
    }

    /// Copies the sample app's extension plists into `folder` at the given relative folders.
    static func place(_ targets: [String: String], in folder: String) throws {
        for (source, destination) in targets {
            try FileManager.default.createDirectory(
                atPath: folder + "/" + destination, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: app + "/" + source + "/Info.plist", toPath: folder + "/" + destination + "/Info.plist")
        }
    }

    @Test func readsABuiltAppAndItsPlugInsOnly() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.place(
            [
                "RichPushDemo": "Demo.app", "NotificationService": "Demo.app/PlugIns/Service.appex",
                "NotificationContent": "Demo.app/PlugIns/Content.appex",
            ], in: folder)
        // A framework's plist inside the app is someone else's, and a bomb there is never read.
        try FileManager.default.createDirectory(
            atPath: folder + "/Demo.app/Frameworks/SDK.framework", withIntermediateDirectories: true)
        try Data(BinaryPlistBuilder.dictionaryBomb(levels: 64)).write(
            to: URL(fileURLWithPath: folder + "/Demo.app/Frameworks/SDK.framework/Info.plist"))
        for given in [folder, folder + "/Demo.app"] {
            let configuration = try AppConfiguration.scan(folder: given)
            #expect(configuration.servicePlist == folder + "/Demo.app/PlugIns/Service.appex/Info.plist")
            #expect(configuration.contentExtensions.map(\.name) == ["Content.appex"])
        }
    }

    @Test func skipsVendoredDeepAndLinkedPlists() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.place(["NotificationService": "App/Extensions/Service/Group"], in: folder)
        let bomb = Data(BinaryPlistBuilder.dictionaryBomb(levels: 64))
        for place in ["Pods/X", "vendor/sdk", "Carthage/Checkouts/Y", ".hidden", "A/B/C/D/E", "Lib/SDK.framework"] {
            try FileManager.default.createDirectory(atPath: folder + "/" + place, withIntermediateDirectories: true)
            try bomb.write(to: URL(fileURLWithPath: folder + "/" + place + "/Info.plist"))
        }
        let outside = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: outside) }
        try bomb.write(to: URL(fileURLWithPath: outside + "/Info.plist"))
        try FileManager.default.createSymbolicLink(atPath: folder + "/Linked", withDestinationPath: outside)
        try FileManager.default.createSymbolicLink(
            atPath: folder + "/Info.plist", withDestinationPath: outside + "/Info.plist")
        let configuration = try AppConfiguration.scan(folder: folder)
        #expect(configuration.servicePlist == folder + "/App/Extensions/Service/Group/Info.plist", "4 levels down")
        // Where an extension's own plist would be, a bomb is read, bounded, and refused by name.
        try FileManager.default.createDirectory(atPath: folder + "/Bomb", withIntermediateDirectories: true)
        try bomb.write(to: URL(fileURLWithPath: folder + "/Bomb/Info.plist"))
        #expect {
            try AppConfiguration.scan(folder: folder)
        } throws: { error in
            let error = error as? AppConfigurationError
            return error?.code == .unusableInput && error?.path == folder + "/Bomb/Info.plist"
                && error?.problem.contains("expands to more than 100000 objects") == true
        }
    }

    /// The walk counts every name it looks at and refuses the folder past its limit (20,000 names;
    /// 100 here, so the test does not create 20,000 files on a thread the other tests share).
    @Test func refusesAFolderTooLargeToWalk() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/Many", withIntermediateDirectories: true)
        for index in 0..<99 {
            _ = FileManager.default.createFile(atPath: folder + "/Many/\(index)", contents: nil)
        }
        // The folder itself holds one name ("Many") and Many holds 99: 100 names, at the limit.
        #expect(try AppFolderWalk.infoPlists(in: folder, limit: 100) == [])
        _ = FileManager.default.createFile(atPath: folder + "/Many/99", contents: nil)
        #expect {
            try AppFolderWalk.infoPlists(in: folder, limit: 100)
        } throws: { error in
            "\(error)".contains("more than 100 files and folders") && "\(error)".contains("--service-plist")
        }
        #expect(AppFolderWalk.maximumEntries == 20_000, "the limit docs/README name")
    }
}

/// The SDK a built extension was linked against, from the keys Xcode writes into its Info.plist.
@Suite struct LinkedSDKTests {
    static func plist(_ extra: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        <key>NSExtension</key><dict><key>NSExtensionPointIdentifier</key>\
        <string>com.apple.usernotifications.service</string></dict>
        \(extra)
        </dict></plist>
        """
    }

    @Test(
        arguments: [
            ("<key>DTSDKName</key><string>iphoneos16.4</string>", IOSVersion(16, 4)),
            ("<key>DTPlatformVersion</key><string>17.5</string>", IOSVersion(17, 5)),
            (
                "<key>DTSDKName</key><string>iphoneos18.0</string><key>DTPlatformVersion</key><string>16.0</string>",
                IOSVersion(18, 0)
            ),
            ("<key>DTSDKName</key><string>iphonesimulator16.4</string>", nil),
            ("<key>DTSDKName</key><string>iphoneos12.0</string>", nil), ("", nil),
        ] as [(String, IOSVersion?)])
    func readsDTSDKNameThenDTPlatformVersion(keys: String, expected: IOSVersion?) throws {
        let folder = try Fixtures.temporaryFolder("richpush-linked-sdk")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/Info.plist"
        try Data(Self.plist(keys).utf8).write(to: URL(fileURLWithPath: path))
        let configuration = try AppConfiguration(servicePlist: path, contentPlists: [])
        #expect(configuration.linkedSDK == expected)
    }
}
