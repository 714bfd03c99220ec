import Foundation
import RichPush
import TestSupport
import Testing

/// Finding and reading the extensions' Info.plist files: XML and binary, and every way they go wrong.
@Suite struct AppConfigurationTests {
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
}
