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
                              [--json FILE] [--html FILE] [--shard I/N] [--fail-under PERCENT]
               richpush bench --serve DIR --devices N ...     # against the embedded server

        Each emulated device receives the push at its scheduled time and runs the whole extension
        pipeline (download with its own budget and caps, sniff, validate, store) on its own connection,
        as separate phones do (--reuse shares connections, to compare). Latency counts from each
        device's scheduled arrival (open loop), so a saturated client or server shows as latency; if the
        client's own --concurrency cap started devices late, the report says so.

        The report: devices, the display rate (devices whose attachment would show within the budget),
        verdict and reason counts, latency percentiles per phase (dns, connect, tls, first_byte,
        download, end_to_end), devices/s and MB/s, and a per-second timeline. As text on stdout, as JSON
        (--json; merge shards with 'richpush report merge'), as an HTML page with charts (--html).

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
          --concurrency N       Devices in flight at most (default 1000).
          --reuse               Share connections between devices (default: a fresh one each).
          --shard I/N           Run the I-th of N equal slices of the device schedule (every N-th device).
          --json FILE           Write the JSON report (schema: bench/report.schema.json).
          --html FILE           Write a self-contained HTML report with charts.
          --serve DIR           Start the embedded asset server on DIR (HTTPS, test certificate) and map
                                cdn.example.com to it. Default target: hero.jpg.
          --out DIR             Keep the stored attachments in DIR (default: a temporary folder, removed).
          --time-limit SECONDS  Launch no device after this (default: the schedule plus the budget plus 60 s).
          --fail-under PCT      Exit 1 when fewer than PCT percent of devices would show the attachment.
          --i-own-this-host     Required to target anything but this machine (127.0.0.1, ::1, localhost).
          --no-progress         No live progress line.
          Plus 'richpush process' options: --budget, --allow-http, --cacert, --connect-to, --max-redirs, ...

        Examples:
          richpush bench --serve Samples/assets --devices 2000
          richpush bench --serve Samples/assets --url 'hero.jpg?rate=200000' --devices 500 --ramp 5 --html burst.html
          richpush bench --url https://cdn.example.com/hero.jpg --devices 10000 --shard 1/4 --json shard-1.json \\
              --i-own-this-host
        """

    static func run(_ arguments: Arguments) async throws -> ExitCode {
        var arguments = arguments
        let payloadPath = try arguments.value("--payload")
        var url = try arguments.value("--url")
        let declaredType = try arguments.value("--type")
        guard let devices: Int = try arguments.number("--devices", in: 1...1_000_000) else {
            throw UsageError("bench needs --devices N (the run is always bounded)")
        }
        let arrivalWord = try arguments.value("--arrival")
        let ramp: Double? = try arguments.number("--ramp", in: 0.001...86_400)
        let rate: Double? = try arguments.number("--rate", in: 0.001...10_000_000)
        let jitter: Double = try arguments.number("--jitter", in: 0...86_400) ?? 0
        let seed: UInt64 = try arguments.number("--seed", in: 0...UInt64.max) ?? 1
        let concurrency: Int = try arguments.number("--concurrency", in: 1...100_000) ?? 1000
        let jsonPath = try arguments.value("--json")
        let htmlPath = try arguments.value("--html")
        let serveFolder = try arguments.value("--serve")
        let keep = try arguments.value("--out")
        let timeLimit: Double? = try arguments.number("--time-limit", in: 1...86_400)
        let failUnder: Double = try arguments.number("--fail-under", in: 0...100) ?? 0
        let ownsHost = arguments.flag("--i-own-this-host")
        let noProgress = arguments.flag("--no-progress")
        let (shard, shardCount) = try parseShard(try arguments.value("--shard"))
        var policy = try ProcessCommand.extensionPolicy(&arguments)
        _ = try arguments.positionals().first.map { throw UsageError("bench takes no argument '\($0)'") }
        guard payloadPath == nil || url == nil else { throw UsageError("give --payload or --url, not both") }
        let modelCount = [arrivalWord != nil && arrivalWord != "burst", ramp != nil, rate != nil].filter { $0 }.count
        guard modelCount <= 1, arrivalWord == nil || arrivalWord == "burst" else {
            throw UsageError("choose one arrival model: --arrival burst, --ramp SECONDS or --rate PER_SECOND")
        }
        let model: ArrivalSchedule.Model =
            ramp.map { .ramp(.milliseconds(Int64($0 * 1000))) } ?? rate.map { .rate($0) } ?? .burst

        // The embedded server, when asked for.
        var server: AssetServer?
        defer { server?.stop() }
        if let serveFolder {
            let samples = SamplesFolder.locate()
            let certs = samples.map { $0 + "/certs" }
            guard let certs, FileManager.default.fileExists(atPath: certs + "/server.pem") else {
                throw UsageError("--serve needs the test certificate in Samples/certs: run from the repository")
            }
            let started = try AssetServer(
                root: serveFolder,
                tls: TLSIdentity.load(certificate: certs + "/server.pem", key: certs + "/server-key.pem"))
            server = started
            policy.fetch.caFile = policy.fetch.caFile ?? certs + "/ca.pem"
            policy.fetch.hostMappings.append(
                HostMapping(
                    host: "cdn.example.com", port: "443", targetHost: "127.0.0.1",
                    targetPort: "\(started.httpsPort ?? 0)"))
            if payloadPath == nil {
                let path = url ?? "hero.jpg"
                if !path.contains("://") {
                    url = "https://cdn.example.com/" + (path.hasPrefix("/") ? String(path.dropFirst()) : path)
                }
            }
        }
        // The payload every device receives.
        let payload: [UInt8]
        let target: BenchReport.Target
        if let payloadPath {
            guard let data = FileManager.default.contents(atPath: payloadPath) else {
                throw UsageError("cannot read --payload \(payloadPath)")
            }
            payload = Array(data)
            guard
                case .attachment(let attURL, let type, _, _, _) = PayloadInspector.inspect(
                    payload, pushType: policy.pushType)
            else {
                throw UsageError(
                    "--payload \(payloadPath) does not request an attachment; check it with 'richpush process'")
            }
            target = BenchReport.Target(url: attURL, type: type, payload: payloadPath)
        } else if let url {
            let type = declaredType ?? URL(string: url)?.pathExtension ?? ""
            guard AttachmentFormat.forExtension(type) != nil else {
                throw UsageError(
                    "cannot tell the attachment type of \(url): give --type (jpg, png, gif, mp3, mp4, ...)")
            }
            let body: JSONValue = .object([
                (
                    "aps",
                    .object([
                        ("alert", .object([("title", .string("richpush bench"))])), ("mutable-content", .number("1")),
                    ])
                ),
                ("ab", .object([("att", .object([("url", .string(url)), ("type", .string(type))]))])),
            ])
            payload = Array(body.text.utf8)
            target = BenchReport.Target(url: url, type: type, payload: nil)
        } else {
            throw UsageError("bench needs --payload FILE or --url URL (or --serve DIR)")
        }
        guard ownsHost || BenchSafety.isLoopback(url: target.url, mappings: policy.fetch.hostMappings) else {
            throw UsageError(
                "\(target.url) is not on this machine. A bench sends a burst of requests: pass --i-own-this-host "
                    + "to confirm you own that host and may load it.")
        }

        let descriptors = BenchSafety.raiseOpenFileLimit()
        // Every device's body goes through a temporary file today, kept or not: a socket and a file each.
        let needed = BenchSafety.descriptorsNeeded(concurrency: min(concurrency, devices), storing: true)
        guard descriptors >= needed else {
            throw UsageError(
                "--concurrency \(concurrency) needs about \(needed) open files, but this process may open only "
                    + "\(descriptors) (ulimit -n; the hard limit is \(BenchSafety.hardOpenFileLimit)): raise it with "
                    + "'ulimit -n \(needed)' or lower --concurrency to \(BenchSafety.concurrency(forDescriptors: descriptors, storing: true))"
            )
        }
        if concurrency > 256 { policy.fetch.receiveBufferBytes = 16 * 1024 }
        let schedule = ArrivalSchedule(
            devices: devices, model: model, jitter: .milliseconds(Int64(jitter * 1000)), seed: seed)
        let indices = Array(ArrivalSchedule.indices(devices: devices, shard: shard, of: shardCount))
        let lastArrival = schedule.offset(of: devices - 1) + .milliseconds(Int64(jitter * 1000))
        let limit =
            timeLimit.map { Duration.milliseconds(Int64($0 * 1000)) } ?? lastArrival + policy.budget + .seconds(60)
        let folder = keep ?? NSTemporaryDirectory() + "richpush-bench-\(UUID().uuidString)"
        defer { if keep == nil { try? FileManager.default.removeItem(atPath: folder) } }
        let engine = try FetchEngine()
        defer { engine.shutdown() }
        let store = try AttachmentStore(folder: folder)
        defer { store.removeScratch() }
        let service = ServiceExtension(
            engine: engine, sniffer: TypeSniffer(description: .unsupportedOnly), store: store, policy: policy)
        var report = BenchReport(
            target: target,
            config: BenchReport.Config(
                devices: devices, arrival: ramp != nil ? "ramp" : rate != nil ? "rate" : "burst", rampSeconds: ramp,
                ratePerSecond: rate, jitterSeconds: jitter, seed: seed, concurrency: concurrency,
                connections: policy.fetch.connections.rawValue, budgetSeconds: policy.budget.inSeconds,
                shardCount: shardCount),
            shards: [shard])
        let runner = BurstRunner(
            service: service, payload: payload, schedule: schedule, indices: indices, concurrency: concurrency,
            timeLimit: limit)
        let display = BenchProgressLine(enabled: !noProgress && isatty(2) == 1)
        printError(
            "richpush bench: \(indices.count) devices\(shardCount > 1 ? " (shard \(shard)/\(shardCount))" : "") -> \(target.url)"
        )
        let run = await runInterruptibly { [report] in
            var report = report
            await runner.run(into: &report, progress: { display.update($0) })
            return report
        }
        report = run.value
        display.finish()
        printLine(summaryText(report))
        do {
            if let jsonPath { try writeOutput(Array((try report.json() + "\n").utf8), to: jsonPath) }
            if let htmlPath { try writeOutput(Array(HTMLReport.render(report).utf8), to: htmlPath) }
        } catch {
            printError("richpush bench: cannot write the report: \(error)")
            return .ioError
        }
        if run.interrupted {
            printError("richpush bench: interrupted; the report covers the devices that finished.")
            return .interrupted
        }
        return report.displayRate * 100 + 1e-9 >= failUnder ? .success : .failure
    }

    static func parseShard(_ text: String?) throws -> (Int, Int) {
        guard let text else { return (1, 1) }
        let parts = text.split(separator: "/").map { Int($0) }
        guard parts.count == 2, let index = parts[0], let count = parts[1], count >= 1, (1...count).contains(index)
        else {
            throw UsageError("--shard takes I/N with 1 <= I <= N, for example 2/4")
        }
        return (index, count)
    }

    /// The text summary printed on stdout.
    static func summaryText(_ report: BenchReport) -> String {
        var lines: [String] = []
        lines.append(
            String(
                format: "Display rate: %.1f%% of %d devices would show the attachment (%d attached).",
                report.displayRate * 100, report.devices, report.attached))
        lines.append(
            String(
                format: "Throughput: %.0f devices/s, %.1f MB/s over %.1f s.", report.devicesPerSecond,
                report.megabytesPerSecond, report.durationSeconds))
        if report.clientDelayed.devices > 0 {
            lines.append(
                String(
                    format:
                        "Client-delayed: %d devices started late because of --concurrency (up to %.0f ms); their latency counts from the scheduled arrival.",
                    report.clientDelayed.devices, report.clientDelayed.maxMilliseconds))
        }
        if let starved = report.reasons[ReasonCode.tooManyOpenFiles.rawValue], starved > 0 {
            lines.append(
                "Client-bound: \(starved) devices failed because richpush ran out of file descriptors; this says "
                    + "nothing about the host. Raise 'ulimit -n' or lower --concurrency.")
        }
        if report.notStarted > 0 {
            lines.append("Not run to completion (time limit or interruption): \(report.notStarted) devices.")
        }
        var table = TextTable(
            ["PHASE (ms)", "COUNT", "P50", "P90", "P99", "P99.9", "MAX"], rightAligned: [1, 2, 3, 4, 5, 6])
        for phase in BenchReport.phases {
            let p = report.percentilesMilliseconds[phase] ?? [:]
            table.append(
                [phase, String(report.histograms[phase]?.count ?? 0)]
                    + ["p50", "p90", "p99", "p99_9", "max"].map { String(format: "%.1f", p[$0] ?? 0) })
        }
        lines += ["", table.rendered, ""]
        var verdicts = TextTable(["VERDICT", "COUNT"], rightAligned: [1])
        for (verdict, count) in report.verdicts.sorted(by: { $0.value > $1.value }) {
            verdicts.append([verdict, String(count)])
        }
        var reasons = TextTable(["REASON", "COUNT"], rightAligned: [1])
        for (reason, count) in report.reasons.sorted(by: { $0.value > $1.value }) {
            reasons.append([reason, String(count)])
        }
        lines += [verdicts.rendered, "", reasons.rendered]
        return lines.joined(separator: "\n")
    }
}

/// The live progress line of a bench: started, done, in flight, rate, verdict counts.
final class BenchProgressLine: Sendable {
    private let line: ProgressLineCore

    init(enabled: Bool) { line = ProgressLineCore(enabled: enabled) }

    func update(_ progress: BurstRunner.Progress) {
        line.draw(final: progress.done == progress.total) {
            let elapsed = max(0.001, (ContinuousClock.now - progress.began).inSeconds)
            let counts = Verdict.allCases.compactMap { verdict in
                progress.verdicts[verdict].map { "\(verdict.rawValue) \($0)" }
            }.joined(separator: "  ")
            return String(
                format: "started %d/%d  done %d  in flight %d  %.0f/s  %@", progress.started, progress.total,
                progress.done, progress.inFlight, Double(progress.done) / elapsed, counts)
        }
    }

    func finish() { line.finish() }
}
