import Foundation
import RichPush
import RichPushServices
import TestSupport
import Testing

/// `analytics show`'s report: the entries recorded, their defects, the outbox an unfinished flush left,
/// as text and as the JSON `--json` prints.
@Suite struct SuiteShowTests {
    @Test func listsWhatIsPendingAndEveryDefect() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let suite = try AppGroupSuite(container: folder, suite: "group.test", creating: true)
        let empty = try SuiteShow(suite: suite)
        #expect(empty.entries.isEmpty && empty.defects.isEmpty && !empty.hasOutbox)
        #expect(empty.text.hasSuffix("\n0 pending item(s) in \(suite.path)"))

        let field = SuiteEntry.Field(key: "source", value: AnalyticsValue(commandLine: "push\nforged"))
        _ = try SuiteRecorder.record([.event(name: "opened", properties: [field]), .email("a@b.c")], in: suite)
        try suite.update { root throws(AnalyticsError) in root["stray_key"] = "x" }
        let show = try SuiteShow(suite: suite)
        #expect(show.entries.count == 2 && show.suite == suite.path)
        #expect(show.defects.map(\.code) == ["unknown-key"])
        let lines = show.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // The header, two rows, the count, the defect: payload text never breaks a line.
        #expect(lines.count == 5)
        #expect(lines.contains { $0.contains("opened") && $0.contains(#"push\nforged"#) })
        #expect(lines[3] == "2 pending item(s) in \(suite.path)")
        #expect(lines[4].hasPrefix("defect: unknown-key: "))

        // The JSON carries the five members `analytics show --json` documents, not the outbox flag.
        let object = try #require(
            try JSONSerialization.jsonObject(with: try JSONEncoder().encode(show)) as? [String: Any])
        #expect(Set(object.keys) == ["suite", "entries", "suiteDefects", "claimed", "rejected"])
        #expect(object["claimed"] as? Int == 0)
    }
}
