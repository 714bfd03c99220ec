import Foundation
import RichPush
import RichPushRuns

/// `report merge` inputs: bench reports and batch summaries read from other machines.
///
/// - Reading never traps; a bench report it accepts writes JSON that reads back to the same report.
/// - Merging an accepted report or summary with a copy of itself (under other shards) never traps:
///   counts add up or the merge is refused as damaged, and a refused merge leaves the report as it was.
enum ReportInvariants {
    static func check(_ bytes: [UInt8]) {
        let data = Data(bytes)
        if let report = try? BenchReport.read(data) {
            guard let text = try? report.json() else {
                require(false, "an accepted bench report cannot be written")
                return
            }
            let again = try? BenchReport.read(Data(text.utf8))
            require(again == report, "a bench report does not read back as itself")
            var merged = report
            var other = report
            other.shards = other.shards.map { $0 &+ report.config.shardCount }
            other.config = report.config
            if (try? merged.merge(other)) == nil { require(merged == report, "a refused merge changed the report") }
        }
        if let summary = try? BatchJSON.decoder.decode(BatchSummary.self, from: data), (try? summary.check()) != nil {
            var merged = summary
            if (try? merged.merge(summary)) == nil { require(merged == summary, "a refused merge changed the summary") }
        }
    }
}
