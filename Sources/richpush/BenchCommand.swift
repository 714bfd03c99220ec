import AssetServer
import Foundation
import RichPush

/// `richpush bench`: a campaign's burst of downloads against the asset host.
enum BenchCommand {
    static let help = """
        Reproduce a campaign's burst at the asset host and report the share of devices that would show the image.

        Usage: richpush bench (--payload FILE | --url URL) --devices N
                              [--arrival burst | --ramp SECONDS | --rate PER_SECOND] [--jitter SECONDS]
                              [--concurrency N] [--reuse] [--budget SECONDS] [process options]
                              [--json FILE] [--html FILE] [--shard I/N] [--threshold EXPR ...]
                              [--fail-under PERCENT] [--max-p99 MS]
               richpush bench --serve DIR --devices N ...     # against the embedded server

        Each emulated device receives the push at its scheduled time and runs the whole extension
        pipeline (download with its own budget and caps, sniff, validate, store) on its own connection,
        as separate phones do (--reuse shares connections, to compare). Latency counts from each
        device's scheduled arrival (open loop), so a saturated client or server shows as latency; if the
        client's own --concurrency cap started devices late, the report says so.

        Before the burst, one trial download checks the target: a TLS trust failure (pass --cacert), an
        unknown host or a refused connection stops the run at once (exit 69) instead of failing every device.

        The report: devices, the display rate (devices whose attachment would show within the budget),
        verdict and reason counts with a sample message each, HTTP status codes, latency statistics per
        phase (dns, connect, tls, first_byte, download, end_to_end: min, mean, stdev, p50 to p99.9, max),
        devices/s and MB/s, the client's own CPU use and scheduling lag (it says when the client, not the
        host, set the pace), the thresholds, and a per-second timeline. As text on stdout, as JSON
        (--json; merge shards with 'richpush report merge'), as an HTML page with charts (--html).
        Nothing is stored unless --out is given.

        Options:
          --payload FILE        The payload every device receives (its ab.att.url is the target).
          --url URL             The asset URL (a payload is made for it; --type sets ab.att.type,
                                default: the URL's extension). With --serve, a path such as
                                'hero.jpg?delay=200' means https://cdn.example.com/<path> on the server.
          --type TYPE           ab.att.type for --url.
          --devices N           Devices in the whole run (all shards), at most 1,000,000.
          --arrival burst       All devices at once (default).
          --ramp SECONDS        Arrivals spread evenly over SECONDS.
          --rate PER_SECOND     Arrivals at a fixed rate.
          --jitter SECONDS      Delay each arrival by a random 0..SECONDS (reproducible with --seed N).
          --network-mix MIX     Give each device a built-in profile by share, drawn with --seed
                                (3g=20,lte=70,wifi=10); the report breaks display rate and latency down
                                per profile. Not with --network.
          --concurrency N       Devices in flight at most (default 1000).
          --reuse               Share connections between devices (default: a fresh one each).
          --shard I/N           Run the I-th of N equal slices of the device schedule (every N-th device).
          --json FILE           Write the JSON report (schema: bench/report.schema.json).
          --html FILE           Write a self-contained HTML report with charts.
          --serve DIR           Start the embedded asset server on DIR (HTTPS, test certificate) and map
                                cdn.example.com to it. Default target: hero.jpg.
          --out DIR             Keep the stored attachments in DIR (default: keep nothing; same verdicts).
          --time-limit SECONDS  Launch no device after this (default: the schedule plus the budget plus 60 s).
          --threshold EXPR      A gate threshold, repeatable, as k6 writes them: METRIC OP NUMBER[UNIT], OP one
                                of < <= > >= == !=. Rates in %: display, http_4xx, http_5xx, errors;
                                end-to-end latency in ms or s: p50, p90, p95, p99; counts: would_crash,
                                configuration_error, not_run, reason:CODE. Examples: 'display>=99%',
                                'p95<800ms', 'http_5xx<1%', 'would_crash==0'. Each is reported PASS/FAIL
                                with its measured value (text, JSON, HTML). Defaults for the metrics none
                                names: display>0%, would_crash==0, configuration_error==0. Devices never
                                run (--time-limit, Ctrl-C) count as not shown.
          --fail-under PCT      Shorthand for --threshold 'display>=PCT%'.
          --max-p99 MS          Shorthand for --threshold 'p99<=MSms'.
          --i-own-this-host     Required to target anything but this machine (127.0.0.1, ::1, localhost).
          --no-progress         No live progress line.
          --progress            Progress even when stderr is not a terminal: one line per second (CI logs).
          --no-preflight        Skip the trial download before the burst.
          Plus 'richpush process' options: --budget, --allow-http, --cacert, --connect-to, --max-redirs, ...

        Examples:
          richpush bench --serve Samples/assets --devices 2000
          richpush bench --serve Samples/assets --url 'hero.jpg?rate=200000' --devices 500 --ramp 5 --html burst.html
          richpush bench --url https://cdn.example.com/hero.jpg --devices 10000 --shard 1/4 --json shard-1.json \\
              --i-own-this-host

        Exit status: 0 done and every threshold met, 1 a threshold failed (named on stderr; a bench where
        nothing displays fails by default), 64 usage,
        69 the trial download found the target unreachable or untrusted, 74 a report cannot be written,
        130 interrupted.
        """

    static func run(_ arguments: Arguments) async throws -> ExitCode {
        var arguments = arguments
        var options = try BenchOptions(parsing: &arguments)
        let server = try options.serveFolder.map { try startServer($0, for: &options.configuration) }
        defer { server?.stop() }
        let session = try BenchSession(options.configuration)
        defer { session.close() }
        let trial = await runInterruptibly { await session.trial() }
        if let problem = trial.value, !trial.interrupted {
            printError("richpush bench: \(problem.message)")
            return .unavailable
        }
        let display = BenchProgressLine(mode: options.progress)
        printError("richpush bench: " + session.startLine)
        // Stopped during the trial: no device runs, and the report says so.
        let run = await runInterruptibly { [trial] in
            await session.run(startingDevices: !trial.interrupted, progress: { display.update($0) })
        }
        display.finish()
        let report = run.value.report
        printLine(BenchSummary.text(report))
        // Path A: every device's delivery event, 75 to a request, after the burst (never inside it).
        _ = await options.tracking.flush()
        do {
            if let path = options.jsonPath { try writeOutput(Array((try report.json() + "\n").utf8), to: path) }
            if let path = options.htmlPath { try writeOutput(Array(HTMLReport.render(report).utf8), to: path) }
        } catch {
            printError("richpush bench: cannot write the report: \(error)")
            return .ioError
        }
        if run.interrupted {
            printError("richpush bench: interrupted; the report covers the devices that finished.")
            return .interrupted
        }
        for threshold in run.value.failedThresholds {
            printError("richpush bench: threshold failed: \(threshold.message).")
        }
        if let starved = report.reasons[ReasonCode.tooManyOpenFiles.rawValue], starved > 0 {
            printError(
                "richpush bench: \(starved) device(s) failed because richpush ran out of file descriptors "
                    + "(too-many-open-files): the client's limit, not the host's, so the report understates the "
                    + "host. Raise 'ulimit -n' or lower --concurrency, and run it again.")
            return .unavailable
        }
        return run.value.passed ? .success : .failure
    }

    /// Starts the embedded asset server on `folder` with the test certificate and points
    /// `configuration` at it (`cdn.example.com` maps to the server).
    static func startServer(_ folder: String, for configuration: inout BenchConfiguration) throws -> AssetServer {
        let certs = SamplesFolder.locate().map { $0 + "/certs" }
        guard let certs, FileManager.default.fileExists(atPath: certs + "/server.pem") else {
            throw UsageError("--serve needs the test certificate in Samples/certs: run from the repository")
        }
        // The bench is the server's only client: no per-address share, so a burst may take every slot.
        let server = try AssetServer(
            root: folder, tls: TLSIdentity.load(certificate: certs + "/server.pem", key: certs + "/server-key.pem"),
            perAddressLimit: .max)
        configuration.serve(httpsPort: Int(server.httpsPort ?? 0), caFile: certs + "/ca.pem")
        return server
    }
}
