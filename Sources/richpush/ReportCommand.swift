import Foundation
import RichPush

/// `richpush report merge`: combine the JSON reports of a sharded bench.
enum ReportCommand {
    static let help = """
        Combine bench reports.

        Usage: richpush report merge A.json B.json ... [--html FILE] [--fail-under PCT] [--max-p99 MS] > merged.json
               richpush report merge shard-1/summary.json shard-2/summary.json ... > summary.json   (batch shards)

        Merges the JSON reports of the shards of one 'richpush bench' run (same target and settings,
        different --shard) into the report one machine would have produced for the same measurements:
        counts and histograms add up, percentiles are recomputed from the merged histograms, and the
        per-second timelines line up by offset from each shard's start. Writes the merged JSON on stdout.
        Reports of the richpush.bench/1 format (older versions) cannot be merged: re-run those shards.
        --fail-under and --max-p99 apply to the merged run as they do to 'richpush bench' (exit 1, named
        on stderr, when one fails).

        Example:
          richpush report merge shard-1.json shard-2.json shard-3.json shard-4.json --html burst.html > burst.json
        """

    static func run(_ arguments: Arguments) throws -> ExitCode {
        var arguments = arguments
        let html = try arguments.value("--html")
        let failUnder: Double? = try arguments.number("--fail-under", in: 0...100)
        let maxP99: Double? = try arguments.number("--max-p99", in: 0.001...86_400_000)
        var thresholds: [ReportMerge.ThresholdText] = []
        if let failUnder { thresholds.append(.init("display>=\(failUnder)%", origin: "--fail-under")) }
        if let maxP99 { thresholds.append(.init("p99<=\(maxP99)ms", origin: "--max-p99")) }
        let merge = try ReportMerge(words: try arguments.positionals(), htmlPath: html, thresholds: thresholds)
        if merge.isBatch { return try mergeBatchSummaries(merge) }
        let merged = try merge.benchReport()
        for warning in merged.warnings { printError("richpush report: warning: " + warning + ".") }
        let result = merged.value
        printLine(try result.json())
        if let html {
            do { try writeOutput(Array(HTMLReport.render(result).utf8), to: html) } catch {
                printError("richpush report: \(error.message)")
                return .ioError
            }
        }
        printError(BenchSummary.text(result))
        let failed = result.thresholds.filter { !$0.passed }
        for threshold in failed { printError("richpush report: threshold failed: \(threshold.message).") }
        return failed.isEmpty ? .success : .failure
    }

    /// Combines the `summary.json` of batch shards (`batch --shard I/N`) into the summary one machine
    /// would have written: counts add up, the display rate and download percentiles are recomputed.
    static func mergeBatchSummaries(_ merge: ReportMerge) throws -> ExitCode {
        let merged = try merge.batchSummary()
        for warning in merged.warnings { printError("richpush report: warning: " + warning + ".") }
        let result = merged.value
        printLine(try BatchJSON.pretty(result))
        printError(result.text(folder: nil))
        return GateDecision(result).passed ? .success : .failure
    }
}
