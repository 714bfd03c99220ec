import Foundation
import RichPush
import Synchronization

/// `richpush batch`: a folder (or NDJSON file) of payloads through the emulated extension.
enum BatchCommand {
    static let help = """
        Run a whole campaign's payloads through the emulated extension, concurrently and resumably.

        Usage: richpush batch DIR --out OUTDIR [process options] [--concurrency N] [--recursive]
                              [--junit FILE] [--fail-under PERCENT] [--force] [--no-progress]
                              [--share-downloads]

        DIR is a folder of *.json payloads (one payload per file; --recursive goes below it), or an
        NDJSON file (one payload per line). Each payload goes through exactly what 'richpush process'
        does, as its own device. OUTDIR receives:
          payloads/<name>    each mutated payload, under the input's relative name
                             (NDJSON lines: payloads/<file>/<line>.json)
          attachments/       the stored attachments
          results.ndjson     one record per payload: verdict, reason, warnings, HTTP status, bytes,
                             sniffed MIME, local file, timings
          summary.json       counts per verdict and reason, display rate, download-time percentiles
        A summary table goes to stderr, with a live progress line when stderr is a terminal.

        Ctrl-C (or SIGTERM) stops starting payloads, cancels downloads in flight, writes the results
        of what finished and exits 130. Run the same command again to resume: payloads with a
        complete output are skipped (--force redoes them).

        Exit status: 0 when every requested attachment would show (or the share that would is at
        least --fail-under), 1 otherwise, 130 when interrupted, 64 usage error, 65 no usable input,
        74 output not writable (or in use by another batch).

        Options (besides those of 'richpush process': --budget, --allow-http, --cacert, --connect-to, ...):
          --out OUTDIR         Where everything is written (required).
          --concurrency N      Payloads in flight at once (default 32).
          --recursive          Also read *.json files in subfolders of DIR.
          --junit FILE         Also write a JUnit XML report: one test case per payload.
          --fail-under PCT     Pass when at least PCT percent of requested attachments would show
                               (default 100).
          --force              Redo payloads an earlier run completed.
          --no-progress        No live progress line.
          --share-downloads    Download each URL once per run (every payload still gets its own verdict).
          --fsync              fsync each file before it gets its name (survives power loss; slower).

        One batch at a time per OUTDIR: a second batch on a folder in use exits 74 and names the other run.

        Example:
          richpush batch Samples/payloads --out batch-out --cacert Samples/certs/ca.pem \\
              --connect-to cdn.example.com:443:127.0.0.1:<tls-port> --junit batch-out/junit.xml
        """

    static func run(_ arguments: Arguments) async throws -> ExitCode {
        var arguments = arguments
        guard let outFolder = try arguments.value("--out") else { throw UsageError("batch needs --out OUTDIR") }
        let concurrency: Int = try arguments.number("--concurrency", in: 1...100_000) ?? 32
        let recursive = arguments.flag("--recursive", "-r")
        let junit = try arguments.value("--junit")
        let failUnder: Double = try arguments.number("--fail-under", in: 0...100) ?? 100
        let force = arguments.flag("--force")
        let noProgress = arguments.flag("--no-progress")
        let share = arguments.flag("--share-downloads")
        let durable = arguments.flag("--fsync")
        let policy = try ProcessCommand.extensionPolicy(&arguments)
        let positionals = try arguments.positionals()
        guard positionals.count == 1, let input = positionals.first else {
            throw UsageError("batch takes one folder (or NDJSON file) of payloads")
        }
        let items: [BatchItem]
        do { items = try BatchInput.items(at: input, recursive: recursive) } catch {
            printError("richpush batch: \(error.message)")
            return .dataError
        }
        guard !items.isEmpty else {
            printError("richpush batch: no payloads in '\(input)' (looked for *.json\(recursive ? " below it" : ""))")
            return .dataError
        }
        let output: AttachmentStore
        let attachments: AttachmentStore
        let lock: OutputLock
        do {
            output = try AttachmentStore(folder: outFolder, durable: durable)
            // Before anything in the folder is touched: another batch's temporaries are not leftovers.
            lock = try OutputLock.acquire(folder: output.folder)
            attachments = try AttachmentStore(folder: outFolder + "/attachments", durable: durable)
        } catch {
            printError("richpush batch: \(error.message)")
            return .ioError
        }
        defer { lock.release() }
        output.removeLeftovers()
        attachments.removeLeftovers()
        let engine = try FetchEngine()
        defer {
            engine.shutdown()
            attachments.removeScratch()
        }
        let shared = share ? SharedDownloads(engine: engine, store: attachments) : nil
        // Records carry the sniffed MIME type; libmagic's description is worked out only where a message needs it.
        let service = ServiceExtension(
            engine: engine, sniffer: TypeSniffer(description: .unsupportedOnly), store: attachments, policy: policy,
            sharedDownloads: shared)
        let runner = BatchRunner(
            items: items, service: service, output: output, concurrency: concurrency, force: force)

        let display = ProgressLine(enabled: !noProgress && isatty(2) == 1)
        // On a signal, also shut the engine down: that ends every download in flight at once, shared
        // ones too (they end as cancelled: no record, redone on resume).
        let run = await runInterruptibly(
            { () -> Result<BatchSummary, StoreError> in
                do throws(StoreError) {
                    return .success(try await runner.run(progress: { display.update($0) }))
                } catch {
                    return .failure(error)
                }
            }, onSignal: { engine.shutdown() })
        display.finish()
        let summary: BatchSummary
        switch run.value {
        case .success(let value): summary = value
        case .failure(let error):
            printError("richpush batch: \(error.message)")
            return .ioError
        }
        let interrupted = run.interrupted
        await shared?.removeAll()
        if let junit {
            var report = JUnitReport()
            do {
                try runner.forEachRecord { report.add($0) }
            } catch {
                printError("richpush batch: cannot write '\(junit)': \(error.message)")
                return .ioError
            }
            do { try writeOutput(Array(report.xml.utf8), to: junit) } catch {
                printError("richpush batch: \(error.message)")
                return .ioError
            }
        }
        printError(summaryText(summary, folder: output.folder))
        if summary.interrupted || interrupted {
            printError(
                "Interrupted: \(summary.total - summary.recorded) payload(s) left. Run the same command to resume.")
            return .interrupted
        }
        return summary.displayRate * 100 >= failUnder - 1e-9 ? .success : .failure
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
        lines.append("Results: \(folder)/results.ndjson, \(folder)/summary.json")
        return lines.joined(separator: "\n")
    }
}

/// A progress line on a terminal, redrawn in place at most five times a second.
final class ProgressLineCore: Sendable {
    private let enabled: Bool
    private let state = Mutex<(last: ContinuousClock.Instant?, drawn: Bool)>((nil, false))

    init(enabled: Bool) { self.enabled = enabled }

    /// Draws `text()` unless the last draw was under 200 ms ago (a final state always draws).
    func draw(final: Bool, _ text: () -> String) {
        guard enabled else { return }
        let now = ContinuousClock.now
        let due = state.withLock { state -> Bool in
            guard final || state.last.map({ now - $0 >= .milliseconds(200) }) ?? true else { return false }
            state.last = now
            state.drawn = true
            return true
        }
        guard due else { return }
        StandardError.write("\r\u{1B}[K" + text())
    }

    /// Ends the line, if one was drawn.
    func finish() {
        guard enabled, state.withLock({ $0.drawn }) else { return }
        StandardError.write("\n")
    }
}

/// The batch progress line: done/total, rate, ETA, counts by verdict.
final class ProgressLine: Sendable {
    private let line: ProgressLineCore

    init(enabled: Bool) { line = ProgressLineCore(enabled: enabled) }

    func update(_ progress: BatchRunner.Progress) {
        line.draw(final: progress.done + progress.skipped == progress.total) {
            let elapsed = max(0.001, (ContinuousClock.now - progress.started).inSeconds)
            let rate = Double(progress.done) / elapsed
            let left = progress.total - progress.skipped - progress.done
            let eta = rate > 0 ? String(format: "%.0fs", Double(left) / rate) : "?"
            let counts = Verdict.allCases.compactMap { verdict in
                progress.verdicts[verdict].map { "\(verdict.rawValue) \($0)" }
            }.joined(separator: "  ")
            return String(
                format: "[%d/%d] %.0f/s ETA %@  %@", progress.done + progress.skipped, progress.total, rate, eta,
                counts)
        }
    }

    func finish() { line.finish() }
}
