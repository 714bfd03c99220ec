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
        let words = try arguments.positionals()
        guard words.first == "merge" else { throw UsageError("report takes the subcommand 'merge'") }
        let files = Array(words.dropFirst())
        guard !files.isEmpty else { throw UsageError("report merge needs at least one JSON report") }
        if let first = files.first.flatMap({ FileManager.default.contents(atPath: $0) }),
            (try? BatchJSON.decoder.decode(BatchSummary.self, from: first)) != nil
        {
            guard html == nil, maxP99 == nil else {
                throw UsageError("--html and --max-p99 go with bench reports; these are batch summaries")
            }
            return try mergeBatchSummaries(files, failUnder: failUnder)
        }
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
        printError(BenchSummary.text(result))
        let failed = result.thresholds.filter { !$0.passed }
        for threshold in failed { printError("richpush report: threshold failed: \(threshold.message).") }
        return failed.isEmpty ? .success : .failure
    }

    /// Combines the `summary.json` of batch shards (`batch --shard I/N`) into the summary one machine
    /// would have written: counts add up, the display rate and download percentiles are recomputed.
    static func mergeBatchSummaries(_ files: [String], failUnder: Double?) throws -> ExitCode {
        var merged: BatchSummary?
        for file in files {
            guard let data = FileManager.default.contents(atPath: file),
                let summary = try? BatchJSON.decoder.decode(BatchSummary.self, from: data)
            else {
                throw CommandFailure(
                    .dataError, "\(file) is not a batch summary.json (give every shard's OUTDIR/summary.json)")
            }
            if merged == nil { merged = summary } else { merged?.merge(summary) }
        }
        guard let result = merged else { return .dataError }
        if let count = result.shardCount, let shards = result.shards, shards != Array(1...count) {
            printError("richpush report: shards \(shards) of \(count): the merged summary covers only those.")
        }
        printLine(try BatchJSON.pretty(result))
        printError(result.text(folder: "(merged)"))
        if let failUnder, result.displayRate * 100 < failUnder - 1e-9 {
            printError(
                String(
                    format: "richpush report: --fail-under %g not met: %.1f%% would show.", failUnder,
                    result.displayRate * 100))
            return .failure
        }
        return .success
    }
}
