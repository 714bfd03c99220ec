import Foundation
import RichPush
import RichPushServices
import TestSupport
import Testing

/// The App Group suite as a real property list: read, changed under the lock, replaced atomically.
@Suite struct AppGroupSuiteTests {
    /// A container with `Library/Preferences` holding `suite.plist` written by Foundation in `format`.
    static func container(
        _ root: [String: Any], format: PropertyListSerialization.PropertyListFormat = .binary,
        name: String = "group.com.example.app.shared"
    ) throws -> (folder: String, plist: String) {
        let folder = try Fixtures.temporaryFolder("richpush-appgroup")
        let preferences = folder + "/Library/Preferences"
        try FileManager.default.createDirectory(atPath: preferences, withIntermediateDirectories: true)
        let data = try PropertyListSerialization.data(fromPropertyList: root, format: format, options: 0)
        let plist = preferences + "/" + name + ".plist"
        try data.write(to: URL(fileURLWithPath: plist))
        return (folder, plist)
    }

    static func decode(_ path: String) throws -> (
        root: [String: Any], format: PropertyListSerialization.PropertyListFormat
    ) {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var format = PropertyListSerialization.PropertyListFormat.binary
        let value = try PropertyListSerialization.propertyList(from: data, options: [], format: &format)
        return (try #require(value as? [String: Any]), format)
    }

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.binary, .xml])
    func recordsKeepTheJSONTypesAndTheFileFormat(format: PropertyListSerialization.PropertyListFormat) throws {
        let (folder, plist) = try Self.container(
            ["pending_custom_events": [["event_name": "opened", "source": "push"]], "other_app_setting": 3],
            format: format)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let suite = try AppGroupSuite(container: folder, suite: nil)
        #expect(suite.name == "group.com.example.app.shared")
        try SuiteRecorder.record(
            [
                .event(
                    name: "purchase",
                    properties: [
                        .init(key: "amount", value: .double(9.99)), .init(key: "count", value: .integer(2)),
                        .init(key: "gift", value: .bool(true)), .init(key: "sku", value: .string("A-1")),
                    ]),
                .customAttribute(key: "tiers", value: .strings(["gold", "silver"])),
                .customAttribute(key: "vip", value: .bool(false)),
                .email("ana@example.com"),
            ], in: suite)
        let (root, written) = try Self.decode(plist)
        #expect(written == format, "the suite keeps the format Foundation wrote it in")
        #expect((root["other_app_setting"] as? Int) == 3, "keys richpush does not own survive")
        let events = try #require(root["pending_custom_events"] as? [[String: Any]])
        #expect(events.count == 2)
        #expect(events[1]["event_name"] as? String == "purchase")
        #expect(type(of: events[1]["gift"]!) == Bool.self)
        #expect(events[1]["amount"] as? Double == 9.99)

        let snapshot = try suite.read()
        let purchase = try #require(snapshot.entries(.event).last)
        #expect(purchase.name == "purchase")
        #expect(
            purchase.fields == [
                .init(key: "amount", value: .double(9.99)), .init(key: "count", value: .integer(2)),
                .init(key: "gift", value: .bool(true)), .init(key: "sku", value: .string("A-1")),
            ])
        #expect(
            snapshot.entries(.customAttribute).map(\.fields) == [
                [.init(key: "tiers", value: .strings(["gold", "silver"]))], [.init(key: "vip", value: .bool(false))],
            ])
        #expect(
            snapshot.entries(.userAttribute).map(\.fields) == [[.init(key: "email", value: .string("ana@example.com"))]]
        )
        #expect(snapshot.suiteDefects.map(\.code) == ["unknown-key"])
        #expect(Fixtures.files(in: folder + "/Library/Preferences").filter { $0.hasSuffix(".part") }.isEmpty)
    }

    @Test func pointsOutEachKnownDefect() throws {
        let badBlob = Data("not a plist".utf8)
        let (folder, _) = try Self.container([
            "pending_custom_events": [["event_name": 42, "screen": "home"], ["event_name": "ok"]],
            "pending_custom_attributes": [["event_name": "purchase", "amount": 3]],
            "pending_user_attributes": [badBlob, try UserAttributeCoding.encode(key: "email", value: "a@b.c")],
            "pending_custom_event": [["event_name": "typo"]],
            "richpush_flush_claim": "k2x9",
        ])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let snapshot = try AppGroupSuite(container: folder, suite: nil).read()
        let codes = Set(snapshot.allDefects.map(\.code))
        #expect(
            codes == ["event-name-not-string", "event-under-attributes", "undecodable-user-attribute", "unknown-key"])
        #expect(snapshot.entries.filter(\.isSendable).count == 2)
        #expect(snapshot.suiteDefects.count == 1, "the typo is flagged, the flush's claim marker is not")
        #expect(snapshot.claimMarker == "k2x9")
    }

    @Test func decodesAUserAttributeWrittenAsASwiftEnumCase() throws {
        let data = try PropertyListSerialization.data(
            fromPropertyList: ["email": ["_0": "x@y.z"]], format: .binary, options: 0)
        #expect(UserAttributeCoding.decode(data)?.value == "x@y.z")
        #expect(UserAttributeCoding.decode("text") == nil)
    }

    @Test func findsTheOnlySuiteOrAsksForOne() throws {
        let (folder, _) = try Self.container([:])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data().write(to: URL(fileURLWithPath: folder + "/Library/Preferences/second.plist"))
        #expect(throws: AnalyticsError.self) { try AppGroupSuite(container: folder, suite: nil) }
        #expect(try AppGroupSuite(container: folder, suite: "second").name == "second")
        #expect(throws: AnalyticsError.self) { try AppGroupSuite(container: folder + "/missing", suite: nil) }
        #expect(throws: AnalyticsError.self) { try AppGroupSuite(container: folder, suite: "../x") }
    }

    @Test func aSuiteThatIsNotAPropertyListIsRefusedAndLeftAlone() throws {
        let (folder, plist) = try Self.container([:])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: plist))
        let suite = try AppGroupSuite(container: folder, suite: nil)
        #expect(throws: AnalyticsError.self) { try SuiteRecorder.record([.email("a@b.c")], in: suite) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: plist)) == Data("garbage".utf8))
    }

    @Test func aBombSuiteIsRefusedAsUnusableNamingTheFileAndTheDefect() throws {
        let (folder, plist) = try Self.container([:])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(BinaryPlistBuilder.dictionaryBomb(levels: 64, key: "pending_custom_events"))
            .write(to: URL(fileURLWithPath: plist))
        let suite = try AppGroupSuite(container: folder, suite: nil)
        for attempt in [{ _ = try suite.read() }, { _ = try SuiteRecorder.record([.email("a@b.c")], in: suite) }] {
            #expect {
                try attempt()
            } throws: { error in
                let error = error as? AnalyticsError
                return error?.code == .suiteUnreadable && error?.message.contains(plist) == true
                    && error?.message.contains("expands to more than 500000 objects") == true
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: plist)).count < 400, "left as it was")
    }

    @Test func aBombStoredAsAUserAttributeIsUndecodableNotRun() throws {
        let (folder, _) = try Self.container([
            "pending_user_attributes": [Data(BinaryPlistBuilder.dictionaryBomb(levels: 64, key: "email"))]
        ])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let snapshot = try AppGroupSuite(container: folder, suite: nil).read()
        #expect(snapshot.allDefects.map(\.code) == ["undecodable-user-attribute"])
    }

    @Test func aWriteRemovesStaleTemporariesOfItsOwnPatternOnly() throws {
        let (folder, _) = try Self.container(["pending_custom_events": [Any]()])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let preferences = folder + "/Library/Preferences"
        // What a SIGKILLed record leaves, an hour old; one being written right now; and names that are not ours.
        let stale = preferences + "/.richpush-0123456789abcdef0123456789abcdef.part"
        let fresh = preferences + "/.richpush-fedcba9876543210.part"
        let others = [
            preferences + "/.richpush-notes.part", preferences + "/richpush-0123.part",
            preferences + "/.richpush-0123.partial",
        ]
        for path in [stale, fresh] + others { try Data("x".utf8).write(to: URL(fileURLWithPath: path)) }
        var old = [timeval(tv_sec: time(nil) - 3600, tv_usec: 0), timeval(tv_sec: time(nil) - 3600, tv_usec: 0)]
        for path in [stale] + others { #expect(utimes(path, &old) == 0) }
        try SuiteRecorder.record([.email("a@b.c")], in: try AppGroupSuite(container: folder, suite: nil))
        #expect(!FileManager.default.fileExists(atPath: stale), "a temporary left by a killed writer is removed")
        #expect(FileManager.default.fileExists(atPath: fresh), "a temporary that may be in use is kept")
        for path in others { #expect(FileManager.default.fileExists(atPath: path), "\(path) is not ours") }
    }

    @Test func commandLineValuesKeepTheirTypes() {
        #expect(AnalyticsValue(commandLine: "12") == .integer(12))
        #expect(AnalyticsValue(commandLine: "1.5") == .double(1.5))
        #expect(AnalyticsValue(commandLine: "true") == .bool(true))
        #expect(AnalyticsValue(commandLine: "[a, b]") == .strings(["a", "b"]))
        #expect(AnalyticsValue(commandLine: "\"12\"") == .string("12"))
        #expect(AnalyticsValue(commandLine: "hello") == .string("hello"))
        #expect(AnalyticsValue(commandLine: "inf") == .string("inf"))
    }
}
