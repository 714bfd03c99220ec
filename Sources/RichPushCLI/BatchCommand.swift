import Foundation
import RichPush
import RichPushRuns
import Synchronization

/// `richpush batch`: a folder (or NDJSON file) of payloads through the emulated extension.
enum BatchCommand {
    // The options of this command, each declared once and read through its key.
    static let out: Key<String?> = .text(
        Option(.out, "OUTDIR", "Where everything is written (required).", example: "out"))
    static let concurrency: Key<Int?> = .number(
        Option(
            .concurrency, "N", "Payloads in flight at once (default \(BatchConfiguration.defaultConcurrency)).",
            aliases: ["-c"], example: "4"), in: 1...100_000)
    static let recursive: Key<Bool> = .flag(
        Option("--recursive", nil, "Also read *.json files in subfolders of INPUT.", aliases: ["-r"]))
    static let junit: Key<String?> = .text(
        Option(
            "--junit", "FILE",
            "Also write a JUnit XML report: one test case per payload, in input order ('-': stdout).",
            example: "junit.xml"))
    static let force: Key<Bool> = .flag(
        Option(.force, nil, "Redo payloads an earlier run completed (and accept changed options)."))
    static let shareDownloads: Key<Bool> = .flag(
        Option(.shareDownloads, nil, "Download each URL once per run (every payload still gets its own verdict)."))
    static let shard: Key<String?> = .text(
        Option(
            .shard, "I/N",
            "Run every N-th payload (the I-th of N shards; stable over runs and machines); "
                + "'richpush report merge' combines the shards' summary.json files.", example: "1/2"))
    static let brazeRequests: Key<Bool> = .flag(
        Option(
            .brazeRequests, nil,
            "Every input (file or NDJSON line) is a Braze /messages/send body or apple_push object, not a "
                + "payload: each is composed as 'richpush compose' does, then run under the apns-push-type "
                + "it composes into; one Braze would refuse is rejected (request-refused) with Braze's words. "
                + "Records keep the request's name and the composed payload ('composed')."))

    static let command = Command(
        name: "batch", synopsis: "batch DIR",
        summary: "Run a folder (or NDJSON file) of payloads, concurrently and resumably.",
        about: """
            Run a whole campaign's payloads through the emulated extension, concurrently and resumably.

            Usage: richpush batch INPUT --out OUTDIR [options]

            INPUT is a folder of *.json payloads (one payload per file; --recursive goes below it), an
            NDJSON file (one payload per line; '-' reads it from stdin), or a file holding one payload
            (pretty-printed or not). Anything else (a README, an empty file) is refused before the run
            (exit 65). Each payload goes through exactly what 'richpush process' does, as its own device.
            OUTDIR receives:
              payloads/<name>    each mutated payload, under the input's relative name
                                 (NDJSON lines: payloads/<file>/<line>.json)
              attachments/       the stored attachments
              results.ndjson     one record per payload, in input order: verdict, reason, warnings, HTTP
                                 status, bytes, sniffed MIME, local file, timings
              summary.json       counts per verdict and reason, display rate, download-time percentiles
            A summary table goes to stderr, with a live progress line (elapsed, rate, in flight, failed,
            ETA) redrawn four times a second when stderr is a terminal, or once a second with --progress.

            Ctrl-C (or SIGTERM) stops starting payloads, cancels downloads in flight, writes the results
            of what finished and exits 130. Run the same command again to resume: payloads with a
            complete output are skipped (--force redoes them). A resume with options that change verdicts
            (--budget, --allow-http, --cacert, --max-bytes, ...) stops and names them (exit 64): run with
            the earlier options, choose another OUTDIR, or add --force to redo everything. One batch at a
            time per OUTDIR: a second batch on a folder in use exits 74 and names the other run.
            """,
        options: [
            OptionGroup(
                "Options",
                [
                    out,
                    concurrency,
                    recursive,
                    junit,
                    Keys.metrics, Keys.summaryMarkdown,
                    Keys.threshold(bench: false), Keys.failUnder(devices: false),
                    force,
                    Keys.iosMix(payloads: true), Keys.audience,
                    shareDownloads,
                    shard,
                    brazeRequests,
                ]),
            .progress, .extensionPolicy(), .app, .download, .mix, .tracking, .output,
        ],
        footer: """
            Example:
              richpush batch Samples/payloads --out batch-out --cacert Samples/certs/ca.pem \\
                  --connect-to cdn.example.com:443:127.0.0.1:<tls-port> --junit batch-out/junit.xml
            """,
        exitNotes: [
            .failure:
                "the gate failed: by default a payload's attachment would not show, or a content extension would crash on it or not show it; else a --threshold (named on stderr)",
            .dataError: "no usable input (no payloads, a missing --cacert or --app)",
            .ioError: "OUTDIR not writable, or in use by another batch",
        ],
        run: { try await run($0) })

    static func run(_ arguments: Arguments) async throws -> ExitCode {
        var arguments = arguments
        var options = try BatchOptions(parsing: &arguments)
        if options.configuration.input == "-" {
            options.configuration.input = try StandardInputCopy.save(in: options.configuration.outFolder)
        }
        options.configuration.tracker = try options.tracking.start()
        defer { options.tracking.stop() }
        // The block captures constants, not the mutable options.
        let (tracking, settled) = (options.tracking, options)
        // The session (OUTDIR's lock, the engine, the scratch files) lives for this block only.
        return try await BatchSession.with(options.configuration) { session, batch in
            // After OUTDIR exists and is cleaned (a JUnit file often goes inside it), before any payload runs.
            let junit = try OutputOptions.prepare(settled.junitPath, option: "--junit")
            defer { junit?.discard() }
            let metrics = try OutputOptions.prepare(settled.metricsPath, option: "--metrics")
            defer { metrics?.discard() }
            let markdown = try OutputOptions.prepare(settled.summaryPath, option: "--summary-md")
            defer { markdown?.discard() }
            // The line is redrawn on a clock from the latest progress, so it moves while payloads are slow.
            let display = ProgressLine(mode: settled.progress)
            let latest = Mutex<BatchRunner.Progress?>(nil)
            display.start { latest.withLock { $0 }.map { BatchProgressText.line($0) } ?? "starting" }
            // On a signal, also stop the engine: that ends every download in flight at once.
            let run = await runInterruptibly(
                { () -> Result<BatchSummary, StoreError> in
                    do throws(StoreError) {
                        return .success(
                            try await batch.run(progress: { progress in latest.withLock { $0 = progress } }))
                    } catch {
                        return .failure(error)
                    }
                }, onSignal: { batch.stop() })
            if let last = latest.withLock({ $0 }) { display.draw(final: true) { BatchProgressText.line(last) } }
            display.finish()
            let summary = try run.value.mapError { CommandFailure(.ioError, $0.message) }.get()
            await batch.removeSharedDownloads()
            if let junit {
                let xml: String
                do throws(StoreError) {
                    xml = try batch.junitXML(
                        summary: summary, properties: [("richpush.version", RichPushCommand.version)])
                } catch {
                    throw CommandFailure(.ioError, "--junit: \(error.message)")
                }
                try commit(Array(xml.utf8), to: junit, option: "--junit", durable: settled.configuration.durable)
            }
            if let metrics {
                try commit(
                    Array(OpenMetrics.text(batch: summary).utf8), to: metrics, option: "--metrics",
                    durable: settled.configuration.durable)
            }
            if let markdown {
                try commit(
                    Array(MarkdownSummary.text(batch: summary).utf8), to: markdown, option: "--summary-md",
                    durable: settled.configuration.durable)
            }
            // A resume is explicit: a CI job that reran into the same OUTDIR is told, before the table,
            // that part of it is an earlier run's (summary.json: `skipped`).
            if summary.skipped > 0 {
                printError(
                    "richpush batch: RESUMED: \(summary.skipped) of \(summary.total) result(s) come from an earlier run in "
                        + "\(session.folder), not redone now. --force redoes every payload; another --out starts afresh."
                )
            }
            printError(summary.text(folder: session.folder))
            // Path A: the delivery events of this run's payloads, 75 to a request, after the verdicts.
            _ = await tracking.flush()
            if summary.interrupted || run.interrupted {
                printError(
                    "Interrupted: \(summary.total - summary.recorded) payload(s) left. Run the same command to resume.")
                return .interrupted
            }
            if let starved = summary.reasons[ReasonCode.tooManyOpenFiles.rawValue], starved > 0 {
                printError(
                    "richpush batch: \(starved) payload(s) failed because richpush ran out of file descriptors "
                        + "(too-many-open-files): the client's limit, not the host's. They are not kept as final: raise "
                        + "'ulimit -n' (or lower --concurrency) and run the same command again to redo them.")
                return .unavailable
            }
            let decision = GateDecision(summary)
            if !decision.passed {
                printError(
                    "richpush batch: the gate failed: "
                        + decision.failed.map { $0.expression ?? $0.name }.joined(separator: ", "))
                return .failure
            }
            return .success
        }
    }
}
