import RichPush

/// What `richpush analytics show` reports about a suite: its pending entries and their defects, and
/// what an unfinished flush holds in the outbox.
///
/// Encoded (snake_case, as the command line writes JSON) it is the command's JSON output; ``text`` is
/// the table the command prints otherwise.
///
/// ```swift
/// let show = try SuiteShow(suite: try AppGroupSuite(container: "Samples/app-group", suite: nil))
/// print(show.text)   // the suite is defective when !show.defects.isEmpty
/// ```
package struct SuiteShow: Sendable, Codable {
    /// The suite's plist.
    package var suite: String
    package var entries: [SuiteEntry]
    /// Defects of the suite as a whole (an unknown key, a key of the wrong type).
    package var suiteDefects: [SuiteDefect]
    /// Items an unfinished flush claimed into the outbox (sent by the next one).
    package var claimed: Int
    /// Items the endpoint rejected, kept in the outbox.
    package var rejected: Int
    /// Whether an outbox exists beside the suite.
    package var hasOutbox = false

    enum CodingKeys: String, CodingKey {
        case suite, entries, suiteDefects, claimed, rejected
    }

    /// Reads the suite and its outbox; fails when either cannot be read.
    package init(suite: AppGroupSuite) throws(AnalyticsError) {
        let snapshot = try suite.read()
        let outbox = try Outbox.load(from: suite.outboxPath)
        self.suite = suite.path
        entries = snapshot.entries
        suiteDefects = snapshot.suiteDefects
        claimed = outbox?.items.count ?? 0
        rejected = outbox?.rejected.count ?? 0
        hasOutbox = outbox != nil
    }

    /// Every defect: the suite's, then each entry's.
    package var defects: [SuiteDefect] { suiteDefects + entries.flatMap(\.defects) }

    /// The table of entries, the count line, and one line per defect; payload text is escaped.
    package var text: String {
        var table = TextTable(["KEY", "#", "NAME", "VALUES", "DEFECT"], rightAligned: [1])
        for entry in entries {
            table.append([
                entry.suiteKey, String(entry.index), entry.name ?? "-",
                entry.fields.map { "\($0.key)=\($0.value.display)" }.joined(separator: " ").escapingControlCharacters,
                entry.defects.map(\.code).joined(separator: ","),
            ])
        }
        let claimedNote = hasOutbox ? "; \(claimed) claimed by an unfinished flush (sent by the next one)" : ""
        var lines = [table.rendered, "\(entries.count) pending item(s) in \(suite)" + claimedNote]
        lines += defects.map { "defect: \($0.code): \($0.message.escapingControlCharacters)" }
        return lines.joined(separator: "\n")
    }
}
