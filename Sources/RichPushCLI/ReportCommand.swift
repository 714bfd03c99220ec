import Foundation
import RichPush
import RichPushRuns

/// `richpush report merge`: combine the JSON reports of a sharded bench.
enum ReportCommand {
    static let command = Command(
        name: "report", synopsis: "report merge", summary: "Combine the JSON reports of a sharded bench or batch.",
        about: """
            Combine the reports of a sharded run.

            Usage: richpush report merge FILE... [options]
            """,
        subcommands: [merge])

    // The options of this command, each declared once and read through its key.
    static let json: Key<String?> = .text(
        Option(
            .json, "FILE", "Write the merged JSON to FILE instead of stdout (replaced atomically; '-' is stdout).",
            example: "merged.json"))
    static let html: Key<String?> = .text(
        Option(.html, "FILE", "Also write the merged bench report as HTML.", example: "merged.html"))
    static let requireAllShards: Key<Bool> = .flag(
        Option(
            "--require-all-shards", nil,
            "Refuse (exit 65) a merge that lacks a shard of the run, instead of warning about it."))

    static let merge = Command(
        name: "merge", synopsis: "merge FILE...", summary: "Merge bench reports or batch summaries into one.",
        about: """
            Merge the reports of the shards of one run into the report one machine would have written.

            Usage: richpush report merge A.json B.json ... [--json FILE] [--html FILE] [--fail-under PCT] [--max-p99 MS]
                   richpush report merge shard-1/summary.json shard-2/summary.json ... [--json FILE]   (batch shards)

            Bench reports (bench --json, of the shards of one run: same target and settings, different
            --shard) merge into the report one machine would have produced for the same measurements:
            counts and histograms add up, percentiles are recomputed from the merged histograms, and the
            timelines line up on the shared start when the shards were given one --start-at (each
            shard's timeline counts from it, its lateness included), else by offset from each shard's
            own start. A warning says when shards began more than 100 ms apart, were given different
            start times, or ran on a clock the kernel says is not synchronized. Batch summaries
            (OUTDIR/summary.json of batch --shard) add their counts up. The merged JSON goes to stdout, or
            with --json to a file, replaced atomically and written whether the gate passed or failed (never
            when the reports do not merge); --html takes a file. Reports of the richpush.bench/1 format
            (older versions) cannot be merged:
            re-run those shards. --threshold, --fail-under and --max-p99 apply to the merged run as they
            do to 'richpush bench' or 'richpush batch' (exit 1, named on stderr, when one fails; the
            defaults apply to the metrics none names).

            Every report carries its run's identity: a random run id per shard, the shard and shard count,
            and a digest of the options that decide verdicts. Shards of one campaign share the digest and
            the shard count. A report given twice, the same shard from two runs, reports of another
            campaign, or overlapping shards are refused (exit 65). Missing shards are a warning on stderr;
            --require-all-shards makes them a refusal (exit 65). Reports of older versions (no identity)
            merge with a warning. A merged batch summary names no results file.
            """,
        options: [
            OptionGroup(
                "Options",
                [
                    json,
                    html,
                    Keys.metrics, Keys.summaryMarkdown,
                    Keys.threshold(bench: true), Keys.failUnder(devices: true), Keys.maxP99,
                    requireAllShards,
                ])
        ],
        footer: """
            Example:
              richpush report merge shard-1.json shard-2.json shard-3.json shard-4.json --html burst.html > burst.json
              richpush report merge shard-*.json --require-all-shards --json merged.json --html merged.html
            """,
        exitNotes: [
            .failure: "a threshold failed on the merged run",
            .dataError: "a file that cannot be read, is not a report, or does not merge with the others",
        ],
        run: { try run($0) })

    static func run(_ arguments: Arguments) throws -> ExitCode {
        // Reading and merging has nothing to finish: the first SIGINT or SIGTERM ends it.
        let exit = TerminationSignal.exitOnSignal()
        defer { TerminationSignal.remove(exit) }
        var arguments = arguments
        let json = try arguments.read(Self.json)
        let html = try arguments.read(Self.html)
        let metrics = try arguments.read(Keys.metrics)
        let summaryMarkdown = try arguments.read(Keys.summaryMarkdown)
        let failUnder: Double? = try arguments.read(Keys.failUnder(devices: true))
        let maxP99: Double? = try arguments.read(Keys.maxP99)
        var thresholds = try arguments.read(Keys.threshold(bench: true)).map {
            ReportMerge.ThresholdText($0, origin: "--threshold")
        }
        let requireAll = try arguments.read(Self.requireAllShards)
        if let failUnder { thresholds.append(.init("display>=\(failUnder)%", origin: "--fail-under")) }
        if let maxP99 { thresholds.append(.init("p99<=\(maxP99)ms", origin: "--max-p99")) }
        let merge = try ReportMerge(
            files: try arguments.positionals(), htmlPath: html, thresholds: thresholds, requireAllShards: requireAll)
        // Checked before any file is merged: the outputs' folders, and stdout, which the JSON takes
        // without --json.
        let outputs = try OutputPlan(
            [("--json", json), ("--html", html), ("--metrics", metrics), ("--summary-md", summaryMarkdown)],
            reservedStandardOutput: json == nil ? "the merged JSON" : nil)
        defer { outputs.discard() }
        if merge.isBatch { return try mergeBatchSummaries(merge, outputs: outputs) }
        let merged = try merge.benchReport()
        for warning in merged.warnings { printError("richpush report: warning: " + warning + ".") }
        let result = merged.value
        if outputs.has("--html") { try outputs.commit("--html", Array(HTMLReport.render(result).utf8)) }
        if outputs.has("--metrics") { try outputs.commit("--metrics", Array(OpenMetrics.text(bench: result).utf8)) }
        if outputs.has("--summary-md") {
            try outputs.commit("--summary-md", Array(MarkdownSummary.text(bench: result).utf8))
        }
        try emit(try result.json(), outputs)
        printError(BenchSummary.text(result))
        let failed = result.thresholds.filter { !$0.passed }
        for threshold in failed { printError("richpush report: threshold failed: \(threshold.message).") }
        return failed.isEmpty ? .success : .failure
    }

    /// Combines the `summary.json` of batch shards (`batch --shard I/N`) into the summary one machine
    /// would have written: counts add up, the display rate and download percentiles are recomputed.
    static func mergeBatchSummaries(_ merge: ReportMerge, outputs: OutputPlan) throws -> ExitCode {
        let merged = try merge.batchSummary()
        for warning in merged.warnings { printError("richpush report: warning: " + warning + ".") }
        let result = merged.value
        if outputs.has("--metrics") { try outputs.commit("--metrics", Array(OpenMetrics.text(batch: result).utf8)) }
        if outputs.has("--summary-md") {
            try outputs.commit("--summary-md", Array(MarkdownSummary.text(batch: result).utf8))
        }
        try emit(try BatchJSON.pretty(result), outputs)
        printError(result.text(folder: nil))
        return GateDecision(result).passed ? .success : .failure
    }

    /// The merged JSON, to `--json`'s file (or stream) when given, else to stdout.
    private static func emit(_ json: String, _ outputs: OutputPlan) throws {
        if outputs.has("--json") {
            try outputs.commit("--json", Array((json + "\n").utf8))
        } else {
            printLine(json)
        }
    }
}
