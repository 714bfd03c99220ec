import Foundation
import RichPush
import Synchronization

/// `richpush batch`: a folder (or NDJSON file) of payloads through the emulated extension.
enum BatchCommand {
    static let help = """
        Run a whole campaign's payloads through the emulated extension, concurrently and resumably.

        Usage: richpush batch INPUT --out OUTDIR [process options] [--concurrency N] [--recursive]
                              [--junit FILE] [--fail-under PERCENT] [--force] [--progress | --no-progress]
                              [--share-downloads]

        INPUT is a folder of *.json payloads (one payload per file; --recursive goes below it), an
        NDJSON file (one payload per line), or a file holding one payload (pretty-printed or not).
        Anything else (a README, an empty file) is refused before the run (exit 65). Each payload goes
        through exactly what 'richpush process' does, as its own device. OUTDIR receives:
          payloads/<name>    each mutated payload, under the input's relative name
                             (NDJSON lines: payloads/<file>/<line>.json)
          attachments/       the stored attachments
          results.ndjson     one record per payload: verdict, reason, warnings, HTTP status, bytes,
                             sniffed MIME, local file, timings
          summary.json       counts per verdict and reason, display rate, download-time percentiles
        A summary table goes to stderr, with a live progress line (elapsed, rate, in flight, failed,
        ETA) redrawn four times a second when stderr is a terminal, or once a second with --progress.

        Ctrl-C (or SIGTERM) stops starting payloads, cancels downloads in flight, writes the results
        of what finished and exits 130. Run the same command again to resume: payloads with a
        complete output are skipped (--force redoes them). A resume with options that change verdicts
        (--budget, --allow-http, --cacert, --max-bytes, ...) stops and names them (exit 64): run with
        the earlier options, choose another OUTDIR, or add --force to redo everything.

        Exit status: 0 when every requested attachment would show (or the share that would is at
        least --fail-under), 1 otherwise (the threshold not met); 65 no usable input; 74 OUTDIR not
        writable or in use by another batch.

        Options:
          --out OUTDIR         Where everything is written (required).
          --concurrency N      Payloads in flight at once (default 32).
          --recursive          Also read *.json files in subfolders of INPUT.
          --junit FILE         Also write a JUnit XML report: one test case per payload ('-': stdout).
          --fail-under PCT     Pass when at least PCT percent of requested attachments would show
                               (default 100).
          --force              Redo payloads an earlier run completed (and accept changed options).
          --progress           A progress line every second even when stderr is not a terminal (CI logs).
          --no-progress        No progress line.
          --share-downloads    Download each URL once per run (every payload still gets its own verdict).
        """ + "\n" + PolicyOptions.help + "\n" + TLSOptions.mixHelp + "\n"
        + "      --seed N                The seed of --network-mix's draw (default 1; the same on every resume).\n"
        + "      --shard I/N             Run every N-th payload (the I-th of N shards; stable over runs and machines);\n"
        + "                              'richpush report merge' combines the shards' summary.json files.\n"
        + TrackOptions.help + "\n" + OutputOptions.help + "\n\n" + """
            One batch at a time per OUTDIR: a second batch on a folder in use exits 74 and names the other run.

            Example:
              richpush batch Samples/payloads --out batch-out --cacert Samples/certs/ca.pem \\
                  --connect-to cdn.example.com:443:127.0.0.1:<tls-port> --junit batch-out/junit.xml
            """

    static func run(_ arguments: Arguments) async throws -> ExitCode {
        var arguments = arguments
        let output = try OutputOptions(parsing: &arguments)
        guard let outFolder = output.folder else { throw UsageError("batch needs --out OUTDIR") }
        let concurrency: Int = try arguments.number("--concurrency", in: 1...100_000) ?? 32
        let recursive = arguments.flag("--recursive", "-r")
        let junitPath = try arguments.value("--junit")
        let failUnder: Double = try arguments.number("--fail-under", in: 0...100) ?? 100
        let force = arguments.flag("--force")
        let progressMode = ProgressLine.mode(
            progress: arguments.flag("--progress"), noProgress: arguments.flag("--no-progress"),
            stderrIsTerminal: isatty(2) == 1)
        let share = arguments.flag("--share-downloads")
        let policy = try PolicyOptions(parsing: &arguments).policy
        let tracking = try TrackOptions(parsing: &arguments, download: policy.fetch)
        let mix = try TLSOptions.networkMix(&arguments, network: policy.fetch.network)
        let shard = try arguments.value("--shard").map { try BenchCommand.parseShard($0) }
        let seed: UInt64 = try arguments.number("--seed", in: 0...UInt64.max) ?? 1
        if mix != nil && share {
            throw UsageError(
                "--share-downloads and --network-mix do not go together (one download cannot cross networks)")
        }
        let positionals = try arguments.positionals()
        guard positionals.count == 1, let input = positionals.first else {
            throw UsageError("batch takes one folder, NDJSON file or payload file")
        }
        let everyItem = try BatchPreflight.items(at: input, recursive: recursive)
        // Every N-th payload by position in the (sorted) input: the same split on every run and machine.
        let items =
            shard.map { shard in
                everyItem.enumerated().filter { $0.offset % shard.1 == shard.0 - 1 }.map(\.element)
            } ?? everyItem
        guard !items.isEmpty else {
            throw CommandFailure(
                .dataError, "no payloads in '\(input)' (looked for *.json\(recursive ? " below it" : ""))")
        }
        let store: AttachmentStore
        let attachments: AttachmentStore
        let lock: OutputLock
        do {
            store = try AttachmentStore(folder: outFolder, durable: output.durable)
            // Before anything in the folder is touched: another batch's temporaries are not leftovers.
            lock = try OutputLock.acquire(folder: store.folder)
            attachments = try AttachmentStore(folder: outFolder + "/attachments", durable: output.durable)
        } catch {
            throw CommandFailure(.ioError, error.message)
        }
        defer { lock.release() }
        let options = BatchPreflight.options(of: policy, sharedDownloads: share)
        let changes = BatchPreflight.changedOptions(in: store.folder, now: options)
        if !changes.isEmpty && !force {
            throw CommandFailure(
                .usage,
                "\(outFolder) holds results made with other options: " + changes.joined(separator: "; ")
                    + ". Run with the earlier options to resume, add --force to redo every payload with "
                    + "these, or choose another --out.")
        }
        try BatchPreflight.record(options, in: store)
        store.removeLeftovers()
        attachments.removeLeftovers()
        // After OUTDIR exists and is cleaned (a JUnit file often goes inside it), before any payload runs.
        let junit = try OutputOptions.prepare(junitPath, option: "--junit")
        defer { junit?.discard() }
        let engine: FetchEngine
        do { engine = try FetchEngine() } catch {
            throw CommandFailure(.unavailable, ProcessCommand.engineFailure(error))
        }
        defer {
            engine.shutdown()
            attachments.removeScratch()
        }
        let shared = share ? SharedDownloads(engine: engine, store: attachments) : nil
        // Records carry the sniffed MIME type; libmagic's description is worked out only where a message needs it.
        let service = ServiceExtension(
            engine: engine, sniffer: TypeSniffer(description: .unsupportedOnly), store: attachments, policy: policy,
            sharedDownloads: shared, tracker: tracking.tracker)
        var configured = BatchRunner(
            items: items, service: service, output: store, concurrency: concurrency, force: force)
        if let mix {
            configured.networks = NetworkAssignment(mix: mix, devices: items.count, seed: seed, service: service)
        }
        configured.shard = shard.map { (index: $0.0, count: $0.1) }
        let runner = configured

        // The line is redrawn on a clock from the latest progress, so it moves while payloads are slow.
        let display = ProgressLine(mode: progressMode)
        let latest = Mutex<BatchRunner.Progress?>(nil)
        display.start { latest.withLock { $0 }.map { BatchProgressText.line($0) } ?? "starting" }
        // On a signal, also shut the engine down: that ends every download in flight at once, shared
        // ones too (they end as cancelled: no record, redone on resume).
        let run = await runInterruptibly(
            { () -> Result<BatchSummary, StoreError> in
                do throws(StoreError) {
                    return .success(try await runner.run(progress: { progress in latest.withLock { $0 = progress } }))
                } catch {
                    return .failure(error)
                }
            }, onSignal: { engine.shutdown() })
        if let last = latest.withLock({ $0 }) { display.draw(final: true) { BatchProgressText.line(last) } }
        display.finish()
        let summary: BatchSummary
        switch run.value {
        case .success(let value): summary = value
        case .failure(let error): throw CommandFailure(.ioError, error.message)
        }
        let interrupted = run.interrupted
        await shared?.removeAll()
        if let junit {
            var report = JUnitReport()
            do { try runner.forEachRecord { report.add($0) } } catch {
                throw CommandFailure(.ioError, "--junit: \(error.message)")
            }
            try commit(Array(report.xml.utf8), to: junit, option: "--junit", durable: output.durable)
        }
        printError(summaryText(summary, folder: store.folder))
        // Path A: the delivery events of this run's payloads, 75 to a request, after the verdicts.
        _ = await tracking.flush()
        if summary.interrupted || interrupted {
            printError(
                "Interrupted: \(summary.total - summary.recorded) payload(s) left. Run the same command to resume.")
            return .interrupted
        }
        guard summary.displayRate * 100 >= failUnder - 1e-9 else {
            printError(
                String(
                    format: "richpush batch: --fail-under %g not met: %.1f%% would show.", failUnder,
                    summary.displayRate * 100))
            return .failure
        }
        return .success
    }

    static func summaryText(_ summary: BatchSummary, folder: String) -> String {
        var lines = [
            "richpush batch: \(summary.total) payloads, \(summary.processed) processed now, \(summary.skipped) done "
                + "earlier, in \(String(format: "%.1f", summary.elapsedSeconds)) s"
        ]
        var verdicts = TextTable(["VERDICT", "COUNT"], rightAligned: [1])
        for verdict in Verdict.allCases {
            if let count = summary.verdicts[verdict.rawValue] { verdicts.append([verdict.rawValue, String(count)]) }
        }
        var reasons = TextTable(["REASON", "COUNT"], rightAligned: [1])
        for (reason, count) in summary.reasons.sorted(by: {
            $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key)
        }) {
            reasons.append([reason, String(count)])
        }
        lines += ["", verdicts.rendered, "", reasons.rendered, ""]
        lines.append(
            String(
                format: "Display rate: %.1f%% (%d of %d payloads that asked for an attachment would show it).",
                summary.displayRate * 100, summary.attached, summary.requested))
        let ms = summary.downloadMilliseconds
        lines.append(
            String(
                format: "Download time: p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms.", ms["p50"] ?? 0,
                ms["p90"] ?? 0, ms["p99"] ?? 0, ms["max"] ?? 0))
        if let networks = summary.networks {
            var table = TextTable(
                ["NETWORK", "PAYLOADS", "SHOWN", "DISPLAY", "P50 MS", "P99 MS"], rightAligned: [1, 2, 3, 4, 5])
            for (name, row) in networks.sorted(by: { $0.key < $1.key }) {
                table.append([
                    name, String(row.payloads), "\(row.attached)/\(row.requested)",
                    String(format: "%.1f%%", row.displayRate * 100),
                    String(format: "%.0f", row.downloadMilliseconds["p50"] ?? 0),
                    String(format: "%.0f", row.downloadMilliseconds["p99"] ?? 0),
                ])
            }
            lines += ["", table.rendered]
        }
        lines.append("Results: \(folder)/results.ndjson, \(folder)/summary.json")
        return lines.joined(separator: "\n")
    }
}
