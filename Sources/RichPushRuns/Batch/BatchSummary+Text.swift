import Foundation
import RichPush

extension BatchSummary {
    /// The summary a batch prints on stderr: counts per verdict and reason, the display rate, the
    /// download time, the per-network rows, the gate's decision (content-extension failures, each
    /// threshold PASS/FAIL) and where the results are (`folder`; nil for a merged summary, which has
    /// no results file).
    public func text(folder: String?) -> String {
        var lines = [
            "richpush batch: \(total) payloads, \(processed) processed now, \(skipped) done "
                + "earlier, in \(String(format: "%.1f", elapsedSeconds)) s"
        ]
        var verdictTable = TextTable(["VERDICT", "COUNT"], rightAligned: [1])
        for verdict in Verdict.allCases {
            if let count = verdicts[verdict.rawValue] { verdictTable.append([verdict.rawValue, String(count)]) }
        }
        var reasonTable = TextTable(["REASON", "COUNT"], rightAligned: [1])
        for (reason, count) in reasons.sorted(by: {
            $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key)
        }) {
            reasonTable.append([reason, String(count)])
        }
        lines += ["", verdictTable.rendered, "", reasonTable.rendered, ""]
        lines.append(
            String(
                format: "Display rate: %.1f%% (%d of %d payloads that asked for an attachment would show it).",
                displayRate * 100, attached, requested))
        if let foreign = otherSDKPayloads, foreign > 0 {
            lines.append(
                "Other SDKs: \(foreign) payload(s) carry another SDK's media keys (warning other-sdk-payload) and "
                    + "count as not shown: run with --sdk auto, or the --sdk each record's warning names.")
        }
        let ms = downloadMilliseconds
        lines.append(
            String(
                format: "Download time: p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms.", ms["p50"] ?? 0,
                ms["p90"] ?? 0, ms["p99"] ?? 0, ms["max"] ?? 0))
        for (heading, rows) in [("NETWORK", networks), ("PHONE", audience)] {
            guard let rows else { continue }
            var table = TextTable(
                [heading, "PAYLOADS", "SHOWN", "DISPLAY", "P50 MS", "P99 MS"], rightAligned: [1, 2, 3, 4, 5])
            for (name, row) in rows.sorted(by: { $0.key < $1.key }) {
                table.append([
                    name, String(row.payloads), "\(row.attached)/\(row.requested)",
                    String(format: "%.1f%%", row.displayRate * 100),
                    String(format: "%.0f", row.downloadMilliseconds["p50"] ?? 0),
                    String(format: "%.0f", row.downloadMilliseconds["p99"] ?? 0),
                ])
            }
            lines += ["", table.rendered]
        }
        if let views = contentExtensions, !views.isEmpty {
            lines.append(
                "Content extensions: "
                    + views.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ") + ".")
        }
        if thresholds != nil { lines += GateDecision(self).lines }
        if let folder { lines.append("Results: \(folder)/results.ndjson, \(folder)/summary.json") }
        return lines.joined(separator: "\n")
    }
}
