import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// `richpush analytics` run as separate processes: record, show, flush against the embedded endpoint.
@Suite struct AnalyticsCommandTests {
    /// An empty App Group container with `Library/Preferences`.
    static func container() throws -> String {
        let folder = try Fixtures.temporaryFolder("richpush-analytics")
        try FileManager.default.createDirectory(
            atPath: folder + "/Library/Preferences", withIntermediateDirectories: true)
        return folder
    }

    static func suiteRoot(_ container: String, suite: String = "group.test") throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: container + "/Library/Preferences/\(suite).plist"))
        return try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
    }

    @Test func concurrentRecordsFromSeveralProcessesLoseNothing() async throws {
        let folder = try Self.container()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let processes = 4
        let records = 25
        try await withThrowingTaskGroup(of: Int32.self) { group in
            for process in 0..<processes {
                group.addTask {
                    for record in 0..<records {
                        let run = try await RichPushBinary.run([
                            "analytics", "record", "--app-group", folder, "--suite", "group.test", "--event", "tap",
                            "--property", "process=\(process)", "--property", "record=\(record)",
                            "--attribute", "last_\(process)=\(record)",
                        ])
                        if run.status != 0 { return run.status }
                    }
                    return 0
                }
            }
            for try await status in group { #expect(status == 0) }
        }
        let root = try Self.suiteRoot(folder)
        let events = try #require(root["pending_custom_events"] as? [[String: Any]])
        #expect(events.count == processes * records)
        let pairs = Set(
            events.compactMap { event -> String? in
                guard let process = event["process"] as? Int, let record = event["record"] as? Int else { return nil }
                return "\(process)-\(record)"
            })
        #expect(pairs.count == processes * records, "every record once")
        #expect((root["pending_custom_attributes"] as? [Any])?.count == processes * records)
        #expect(
            Fixtures.files(in: folder + "/Library/Preferences").allSatisfy { !$0.hasSuffix(".part") },
            "no temporary left behind")
    }

    @Test func showPointsOutTheSampleSuiteDefects() async throws {
        let run = try await RichPushBinary.run([
            "analytics", "show", "--app-group", Fixtures.root + "/Samples/app-group", "--json",
        ])
        #expect(run.status == 1, "defects make show exit 1: \(run.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let entries = try #require(report["entries"] as? [[String: Any]])
        let codes = Set(
            entries.flatMap { ($0["defects"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String } }
                + (report["suite_defects"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String })
        #expect(
            codes == ["event-name-not-string", "event-under-attributes", "undecodable-user-attribute", "unknown-key"])
        let table = try await RichPushBinary.run([
            "analytics", "show", "--app-group", Fixtures.root + "/Samples/app-group",
        ])
        #expect(table.stdout.contains("defect: unknown-key"))
    }

    @Test func recordRefusesAPropertyWithoutAnEvent() async throws {
        let folder = try Self.container()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try await RichPushBinary.run([
            "analytics", "record", "--app-group", folder, "--suite", "group.test", "--property", "a=1",
        ])
        #expect(run.status == 64)
        #expect(!FileManager.default.fileExists(atPath: folder + "/Library/Preferences/group.test.plist"))
    }
}
