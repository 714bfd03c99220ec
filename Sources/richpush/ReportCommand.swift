import Foundation
import RichPush

/// `richpush report merge`: combine the JSON reports of a sharded bench.
enum ReportCommand {
    static let help = """
        Combine bench reports.

        Usage: richpush report merge A.json B.json ... [--html FILE] [--fail-under PCT] [--max-p99 MS] > merged.json

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
        let words = try arguments.positionals()
        guard words.first == "merge" else { throw UsageError("report takes the subcommand 'merge'") }
        let files = Array(words.dropFirst())
        guard !files.isEmpty else { throw UsageError("report merge needs at least one JSON report") }
        var merged: BenchReport?
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                printError("richpush report: cannot read '\(file)'")
                return .dataError
            }
            do {
                let report = try BenchReport.read(data)
                if merged == nil {
                    merged = report
                } else {
                    try merged?.merge(report)
                }
            } catch {
                printError("richpush report: \(file): \(error.message)")
                return .dataError
            }
        }
        guard var result = merged else { return .dataError }
        result.finalize()
        // Thresholds belong to the whole run: each shard's own results are dropped.
        result.thresholds = BenchThresholds(minDisplayPercent: failUnder, maxP99Milliseconds: maxP99).evaluate(result)
        printLine(try result.json())
        if let html {
            do { try writeOutput(Array(HTMLReport.render(result).utf8), to: html) } catch {
                printError("richpush report: \(error.message)")
                return .ioError
            }
        }
        printError(BenchCommand.summaryText(result))
        let failed = result.thresholds.filter { !$0.passed }
        for threshold in failed { printError("richpush report: threshold failed: \(threshold.message).") }
        return failed.isEmpty ? .success : .failure
    }
}
