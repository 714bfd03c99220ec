import Foundation
import RichPush
import RichPushServices
import TestSupport
import Testing

/// `richpush analytics` follows the one exit table: 65 for a damaged suite or outbox, 74 for a file
/// or output that cannot be written, 1 only for defects found or items not delivered.
@Suite struct AnalyticsExitCodeTests {
    /// A container whose suite holds `events` events (each recorded alone, so the plist is kilobytes).
    static func container(events: Int = 0) throws -> String {
        let folder = try Fixtures.temporaryFolder("richpush-analytics-exit")
        try FileManager.default.createDirectory(
            atPath: folder + "/Library/Preferences", withIntermediateDirectories: true)
        let suite = try AppGroupSuite(container: folder, suite: "group.test", creating: true)
        if events > 0 {
            try SuiteRecorder.record(
                (0..<events).map {
                    .event(
                        name: "tap-\($0)",
                        properties: [.init(key: "padding", value: .string(String(repeating: "x", count: 40) + "\($0)"))]
                    )
                }, in: suite)
        }
        try Data("k-exit-123\n".utf8).write(to: URL(fileURLWithPath: folder + "/key"))
        return folder
    }

    static func flush(_ folder: String) -> [String] {
        // Port 9: nothing listens; the flush fails before any request, or has none to make.
        [
            "analytics", "flush", "--app-group", folder, "--suite", "group.test", "--endpoint", "http://127.0.0.1:9",
            "--external-id", "u1", "--api-key-file", folder + "/key", "--attempts", "1",
        ]
    }

    static let garbage: [UInt8] = Array("bplist00 this is not a property list".utf8) + [0xff, 0xfe, 0x00, 0x01]

    /// A suite of garbage bytes was exit 1 (a defect found) for show, and 1 for record and flush.
    @Test(arguments: ["show", "record", "flush"])
    func aDamagedSuiteIsUnusableInput(action: String) async throws {
        let folder = try Self.container()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(Self.garbage).write(to: URL(fileURLWithPath: folder + "/Library/Preferences/group.test.plist"))
        let arguments: [String] =
            switch action {
            case "show": ["analytics", "show", "--app-group", folder, "--suite", "group.test"]
            case "record": ["analytics", "record", "--app-group", folder, "--suite", "group.test", "--event", "a"]
            default: Self.flush(folder)
            }
        let run = try await RichPushBinary.run(arguments)
        #expect(run.status == 65, "\(action): \(run.stderr)")
        #expect(run.stderr.contains("group.test.plist"), "the message names the file: \(run.stderr)")
    }

    /// An outbox of garbage was exit 1 for show and flush.
    @Test(arguments: ["show", "flush"])
    func aDamagedOutboxIsUnusableInput(action: String) async throws {
        let folder = try Self.container(events: 1)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let suite = try AppGroupSuite(container: folder, suite: "group.test")
        try Data(Self.garbage).write(to: URL(fileURLWithPath: suite.outboxPath))
        let arguments =
            action == "show"
            ? ["analytics", "show", "--app-group", folder, "--suite", "group.test"] : Self.flush(folder)
        let run = try await RichPushBinary.run(arguments)
        #expect(run.status == 65, "\(action): \(run.stderr)")
        #expect(run.stderr.contains("richpush-outbox"), "\(run.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: suite.outboxPath)) == Data(Self.garbage), "left alone")
    }

    /// A folder where the outbox should be is an unusable outbox too, not a disk failure.
    @Test func anOutboxThatIsNotAFileIsUnusableInput() async throws {
        let folder = try Self.container(events: 1)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let suite = try AppGroupSuite(container: folder, suite: "group.test")
        try FileManager.default.createDirectory(atPath: suite.outboxPath, withIntermediateDirectories: false)
        let run = try await RichPushBinary.run(["analytics", "show", "--app-group", folder, "--suite", "group.test"])
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr.contains("not a regular file"), "\(run.stderr)")
    }

    @Test func showTellsASuiteWithDefectsFromADamagedOne() async throws {
        let folder = try Self.container()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try AppGroupSuite(container: folder, suite: "group.test").update { root in
            root["pending_custom_evnets"] = [["event_name": "x"]]
        }
        let run = try await RichPushBinary.run(["analytics", "show", "--app-group", folder, "--suite", "group.test"])
        #expect(run.status == 1, "a defect found: \(run.stderr)")
        #expect(run.stdout.contains("defect: unknown-key"))
    }

    /// A full disk (a file size limit, with SIGXFSZ ignored so the write fails with EFBIG) was exit 1.
    @Test(arguments: ["record", "flush"])
    func aFileThatCannotBeWrittenIsExit74(action: String) async throws {
        let folder = try Self.container(events: 60)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let command =
            action == "record"
            ? #""$RP" analytics record --app-group "$DIR" --suite group.test --event more"#
            : #""$RP" analytics flush --app-group "$DIR" --suite group.test --endpoint http://127.0.0.1:9 "#
                + #"--external-id u1 --api-key-file "$DIR/key" --attempts 1"#
        let suitePath = folder + "/Library/Preferences/group.test.plist"
        let before = try Data(contentsOf: URL(fileURLWithPath: suitePath))
        #expect(before.count > 2048, "the suite is larger than the limit")
        let run = try await Shell.run(
            "trap '' XFSZ; ulimit -f 1; " + command, in: folder, environment: ["DIR": folder])
        #expect(run.status == 74, "\(action): \(run.status) \(run.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: suitePath)) == before, "the suite is unchanged")
        let after = try await RichPushBinary.run(["analytics", "show", "--app-group", folder, "--suite", "group.test"])
        #expect(after.stdout.contains("60 pending item(s)"), "nothing lost: \(after.stdout)")
    }

    @Test(arguments: [["--json"], []])
    func aResultThatCannotBeWrittenIsExit74(extra: [String]) async throws {
        let folder = try Self.container(events: 1)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try await Shell.run(
            #""$RP" analytics show --app-group "$DIR" --suite group.test "# + extra.joined(separator: " ")
                + " >/dev/full",
            in: folder, environment: ["DIR": folder])
        #expect(run.status == 74, "\(run.stderr)")
        #expect(run.stderr.contains("stdout"), "\(run.stderr)")
    }
}
