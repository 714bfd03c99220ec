import AssetServer
import Foundation
import POSIXKit
import RichPush
import RichPushRuns

/// `richpush bench`: a campaign's burst of downloads against the asset host.
enum BenchCommand {
    // The options of this command, each declared once and read through its key.
    static let junit = Keys.junit("one test case per threshold of the gate")
    static let payload: Key<String?> = .text(
        Option(
            .payload, "FILE", "The payload every device receives (its ab.att.url is the target).",
            example: "Samples/payloads/01-jpeg-attached.json"))
    static let url: Key<String?> = .text(
        Option(
            .url, "URL",
            "The asset URL (a payload is made for it; --type sets ab.att.type, default: the URL's "
                + "extension). With --serve, a path such as 'hero.jpg?delay=200' means "
                + "https://cdn.example.com/<path> on the server. {device}, {shard} and {random} in the "
                + "path or query make one URL per device.", example: "hero.jpg"))
    static let urls: Key<String?> = .text(
        Option(
            .urls, "FILE",
            "Devices draw their URL from FILE: one URL (or template) a line, optionally a space and a "
                + "weight (default 1); '#' starts a comment. The report breaks results down by URL.",
            example: "Samples/urls.txt"))
    static let type: Key<String?> = .text(Option(.type, "TYPE", "ab.att.type for --url and --urls.", example: "jpg"))
    static let devices: Key<Int?> = .number(
        Option(
            .devices, "N",
            "Devices in the whole run (all shards), at most 1,000,000 (required, unless --rate and "
                + "--duration give it).", aliases: ["-n"], example: "10"), in: 1...1_000_000)
    static let arrival: Key<String?> = .text(
        Option(.arrival, "burst", "All devices at once (the default).", example: "burst"))
    static let ramp: Key<Double?> = .duration(
        Option(.ramp, "SECONDS", "Arrivals spread evenly over SECONDS.", example: "2"), in: 0.001...86_400,
        unit: .seconds)
    static let rate: Key<Double?> = .number(
        Option(.rate, "PER_SECOND", "Arrivals at a fixed rate.", example: "100"), in: 0.001...10_000_000)
    static let duration: Key<Double?> = .duration(
        Option(
            "--duration", "SECONDS",
            "A run bounded by time, as k6's constant arrival rate: with --rate R, R x SECONDS devices; "
                + "with --devices N, arrivals at N / SECONDS per second.", example: "30s"), in: 0.001...86_400,
        unit: .seconds)
    static let jitter: Key<Double?> = .duration(
        Option(
            "--jitter", "SECONDS", "Delay each arrival by a random 0..SECONDS (reproducible with --seed).", example: "1"
        ), in: 0...86_400, unit: .seconds)
    static let concurrency: Key<Int?> = .number(
        Option(
            .concurrency, "N", "Devices in flight at most (default \(BenchConfiguration.defaultConcurrency)).",
            aliases: ["-c"], example: "8"), in: 1...100_000)
    static let shard: Key<String?> = .text(
        Option(
            .shard, "I/N", "Run the I-th of N equal slices of the device schedule (every N-th device).", example: "1/2")
    )
    static let startAt: Key<String?> = .text(
        Option(
            .startAt, "TIME",
            "Start the schedule at TIME (RFC 3339 or epoch seconds), as every shard given it does; at "
                + "most a day ahead, at most 60 s past (then at once, its lateness reported).",
            example: "2026-12-01T18:00:00Z"))
    static let json: Key<String?> = .text(
        Option(
            .json, "FILE", "Write the JSON report (schema: bench/report.schema.json); '-' is stdout.",
            example: "report.json"))
    static let html: Key<String?> = .text(
        Option(.html, "FILE", "Write a self-contained HTML report with charts.", example: "report.html"))
    static let log: Key<String?> = .text(
        Option(
            .log, "FILE",
            "Write one record per device (offsets, phases, status, bytes, HTTP version, cache result, "
                + "verdict, reason): CSV for .csv, JSON lines for .ndjson or .jsonl.", example: "devices.csv"))
    static let serve: Key<String?> = .text(
        Option(
            "--serve", "DIR",
            "Start the embedded asset server on DIR (HTTPS, test certificate) and map cdn.example.com "
                + "to it. Default target: hero.jpg.", example: "Samples/assets"))
    static let out: Key<String?> = .text(
        Option(
            .out, "DIR", "Keep the stored attachments in DIR (default: keep nothing; same verdicts).", example: "out"))
    static let timeLimit: Key<Double?> = .duration(
        Option(
            .timeLimit, "SECONDS",
            "Launch no device after this (default: the schedule plus the budget plus 60 s); the devices "
                + "not launched count as not shown.", example: "60"), in: 1...86_400, unit: .seconds)
    static let ownsHost: Key<Bool> = .flag(
        Option(.ownsHost, nil, "Required to target anything but this machine (127.0.0.1, ::1, localhost)."))
    static let noPreflight: Key<Bool> = .flag(
        Option("--no-preflight", nil, "Skip the trial download before the burst."))

    static let command = Command(
        name: "bench", synopsis: "bench",
        summary: "Reproduce a campaign's burst of downloads; report the share of devices that show it.",
        about: """
            Reproduce a campaign's burst at the asset host and report the share of devices that would show the image.

            Usage: richpush bench (--payload FILE | --url URL | --urls FILE) --devices N [options]
                   richpush bench --serve DIR --devices N [options]     # against the embedded server

            Each emulated device receives the push at its scheduled time and runs the whole extension
            pipeline (download with its own budget and caps, sniff, validate, store) on its own connection,
            as separate phones do (--reuse shares connections, to compare). Latency counts from each
            device's scheduled arrival (open loop), so a saturated client or server shows as latency; if the
            client's own --concurrency cap started devices late, the report says so.

            --start-at TIME makes every shard (--shard I/N, on as many machines) wait for one moment on
            its wall clock, so pods started seconds apart still send one burst; each report records how
            late its shard began and on which clock, and 'richpush report merge' lines the shards up there.

            Before the burst, one trial download checks the target: a TLS trust failure (pass --cacert), an
            unknown host or a refused connection stops the run at once (exit 69) instead of failing every device.

            The report: devices, the display rate (devices whose attachment would show within the budget;
            devices a time limit or Ctrl-C kept from running count as not shown), verdict and reason counts
            with a sample message each, HTTP status codes, latency statistics per phase (dns, connect, tls,
            first_byte, download, end_to_end: min, mean, stdev, p50 to p99.9, max), devices/s and MB/s, the
            client's own CPU use and scheduling lag (it says when the client, not the host, set the pace),
            the thresholds, a per-second timeline and a burst timeline whose buckets follow the run's length
            (10 ms for a burst of a second, 100 ms for a few seconds: in flight, new connections, bytes/s and
            its peak, cache hits and misses), the HTTP versions, the caches' part (each response's
            Cache-Status, CF-Cache-Status, X-Cache or Age: the hit ratio, and latency of hits and misses
            apart), and with --urls or a template, the results by URL (the spread, when there are over 20). As text on stdout (on stderr when a report takes
            stdout), as JSON (--json; merge shards with 'richpush report merge'), as an HTML page with
            charts (--html); one record per device with --log. Every report file is opened before the burst.
            Nothing is stored unless --out is given. A redirect is followed only to this machine unless
            --i-own-this-host is given.
            """,
        options: [
            OptionGroup(
                "Options",
                [
                    payload,
                    url,
                    Keys.iosMix(payloads: false), Keys.audience,
                    urls,
                    type,
                    devices,
                    arrival,
                    ramp,
                    rate,
                    duration,
                    jitter,
                    concurrency,
                    shard,
                    startAt,
                    json,
                    html,
                    Keys.metrics, Keys.summaryMarkdown, junit,
                    log,
                    serve,
                ] + ServeCommand.edgeOptions + [
                    out,
                    timeLimit,
                    Keys.threshold(bench: true), Keys.failUnder(devices: true), Keys.maxP99,
                    ownsHost,
                    noPreflight,
                ]),
            .progress, .extensionPolicy(), .app, .download, .mix, .tracking,
        ],
        footer: """
            Examples:
              richpush bench --serve Samples/assets --devices 2000
              richpush bench --serve Samples/assets --url 'hero.jpg?rate=200000' --devices 500 --ramp 5 --html burst.html
              richpush bench --serve Samples/assets --edge --url 'hero.jpg?v={random}' --devices 500 --log devices.csv
              richpush bench --url https://cdn.example.com/hero.jpg --devices 10000 --shard 1/4 --json shard-1.json \\
                  --i-own-this-host
            """,
        exitNotes: [
            .failure:
                "a threshold failed (each is named on stderr, PASS or FAIL with its measured value); a bench where nothing displays fails by default",
            .unavailable:
                "the trial download found the target unreachable or untrusted, a server could not start, or too few open files",
        ],
        run: { try await run($0) })

    static func run(_ arguments: Arguments) async throws -> ExitCode {
        // Until the burst's work starts (reading a --urls list included), a signal ends the bench at once.
        let setup = TerminationSignal.exitOnSignal()
        defer { TerminationSignal.remove(setup) }
        var arguments = arguments
        var options = try BenchOptions(parsing: &arguments)
        // Checked on the clock before anything opens or starts: a start a day away or long past is a mistake.
        if let start = options.configuration.startAt { try announce(start) }
        // Every report file is opened before the burst: a report that cannot be written costs no run.
        let outputs = try OutputPlan([
            ("--json", options.jsonPath), ("--html", options.htmlPath), ("--log", options.logPath),
            ("--metrics", options.metricsPath), ("--summary-md", options.summaryPath), ("--junit", options.junitPath),
        ])
        let log = try options.logPath.map { path in
            DeviceLog(
                descriptor: outputs.descriptor("--log") ?? -1, path: path,
                format: try DeviceLog.Format(path: path))
        }
        defer { outputs.discard() }
        options.configuration.tracker = try options.tracking.start()
        defer { options.tracking.stop() }
        let server = try options.serveFolder.map {
            try startServer($0, for: &options.configuration, edge: options.edge)
        }
        defer { server?.stop() }
        // The block captures constants, not the mutable options; the session lives for it only.
        let settled = options
        return try await BenchSession.with(options.configuration) { session in
            TerminationSignal.remove(setup)
            let trial = await runInterruptibly { await session.trial() }
            if let problem = trial.value, !trial.interrupted {
                printError("richpush bench: \(problem.message)")
                return .unavailable
            }
            let display = BenchProgressLine(mode: settled.progress)
            printError("richpush bench: " + session.startLine)
            // Stopped during the trial: no device runs, and the report says so.
            let run = await runInterruptibly { [trial] in
                await session.run(startingDevices: !trial.interrupted, log: log, progress: { display.update($0) })
            }
            display.finish()
            let report = run.value.report
            // A report on stdout keeps it for `jq`: the text goes to stderr then.
            if outputs.takesStandardOutput {
                printError(BenchSummary.text(report))
            } else {
                printLine(BenchSummary.text(report))
            }
            // Path A: every device's delivery event, 75 to a request, after the burst (never inside it).
            _ = await settled.tracking.flush()
            if outputs.has("--json") { try outputs.commit("--json", Array((try report.json() + "\n").utf8)) }
            if outputs.has("--html") { try outputs.commit("--html", Array(HTMLReport.render(report).utf8)) }
            if outputs.has("--metrics") { try outputs.commit("--metrics", Array(OpenMetrics.text(bench: report).utf8)) }
            if outputs.has("--junit") {
                var junit = JUnitReport()
                junit.suiteName = "richpush bench"
                junit.wallSeconds = report.durationSeconds
                junit.properties = [
                    ("richpush.version", RichPushCommand.version),
                    ("richpush.options_digest", report.identity?.optionsDigest ?? ""),
                    ("richpush.target", report.target.url), ("richpush.devices", String(report.devices)),
                ]
                junit.add(gate: report.thresholds)
                try outputs.commit("--junit", Array(junit.xml.utf8))
            }
            if outputs.has("--summary-md") {
                try outputs.commit("--summary-md", Array(MarkdownSummary.text(bench: report).utf8))
            }
            if let log {
                do throws(SystemError) { try log.finish() } catch {
                    throw CommandFailure(.ioError, "--log: \(error.message)")
                }
                try outputs.commit("--log", [])
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
    }

    /// Checks `--start-at` against the wall clock (a usage error outside its window) and says on stderr
    /// how long the run will wait, or that it starts late, and whether the clock is synchronized.
    static func announce(_ start: SharedStart) throws {
        let reading = WallClock.read()
        let wait = try start.check(now: reading.time)
        if wait < .zero {
            printError(
                "richpush bench: warning: --start-at \(start.time.rfc3339) was \(SharedStart.describe(.zero - wait)) "
                    + "ago: starting at once; the report records the lateness.")
        } else {
            printError(
                "richpush bench: waiting \(SharedStart.describe(wait)) for --start-at \(start.time.rfc3339) "
                    + "(\(WallClock.name) reads \(reading.time.rfc3339)).")
        }
        if reading.synchronized == false {
            printError(
                "richpush bench: warning: this machine's clock is not synchronized (the kernel's NTP state): "
                    + "shards on other machines start apart by as much as their clocks disagree.")
        }
    }

    /// Starts the embedded asset server on `folder` with the test certificate and points
    /// `configuration` at it (`cdn.example.com` maps to the server).
    static func startServer(_ folder: String, for configuration: inout BenchConfiguration, edge: EdgeOptions? = nil)
        throws -> AssetServer
    {
        let certs = SamplesFolder.locate().map { $0 + "/certs" }
        guard let certs, FileManager.default.fileExists(atPath: certs + "/server.pem") else {
            throw UsageError("--serve needs the test certificate in Samples/certs: run from the repository")
        }
        // The bench is the server's only client: no per-address share, so a burst may take every slot.
        let server = try AssetServer(
            root: folder, tls: TLSIdentity.load(certificate: certs + "/server.pem", key: certs + "/server-key.pem"),
            perAddressLimit: .max, edge: edge)
        configuration.serve(httpsPort: Int(server.httpsPort ?? 0), caFile: certs + "/ca.pem")
        return server
    }
}
