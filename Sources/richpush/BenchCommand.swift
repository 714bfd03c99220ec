import AssetServer
import Foundation
import RichPush
import Synchronization

/// `richpush bench`: a campaign's burst of downloads against the asset host.
enum BenchCommand {
    static let help = """
        Reproduce a campaign's burst at the asset host and report the share of devices that would show the image.

        Usage: richpush bench (--payload FILE | --url URL) --devices N
                              [--arrival burst | --ramp SECONDS | --rate PER_SECOND] [--jitter SECONDS]
                              [--concurrency N] [--reuse] [--budget SECONDS] [process options]
                              [--json FILE] [--html FILE] [--shard I/N] [--fail-under PERCENT] [--max-p99 MS]
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
          --fail-under PCT      Exit 1 when fewer than PCT percent of devices would show the attachment.
          --max-p99 MS          Exit 1 when the p99 end-to-end latency is over MS milliseconds.
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

        Exit status: 0 done and every threshold met, 1 a threshold failed (named on stderr), 64 usage,
        69 the trial download found the target unreachable or untrusted, 74 a report cannot be written,
        130 interrupted.
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
        let failUnder: Double? = try arguments.number("--fail-under", in: 0...100)
        let maxP99: Double? = try arguments.number("--max-p99", in: 0.001...86_400_000)
        let ownsHost = arguments.flag("--i-own-this-host")
        let noProgress = arguments.flag("--no-progress")
        let forceProgress = arguments.flag("--progress")
        let noPreflight = arguments.flag("--no-preflight")
        let (shard, shardCount) = try parseShard(try arguments.value("--shard"))
        var policy = try ProcessCommand.extensionPolicy(&arguments)
        let tracking = try TrackOptions(parsing: &arguments, download: policy.fetch)
        let mix = try TLSOptions.networkMix(&arguments, network: policy.fetch.network)
        _ = try arguments.positionals().first.map { throw UsageError("bench takes no argument '\($0)'") }
        guard payloadPath == nil || url == nil else { throw UsageError("give --payload or --url, not both") }
        let modelCount = [arrivalWord != nil && arrivalWord != "burst", ramp != nil, rate != nil].filter { $0 }.count
        guard modelCount <= 1, arrivalWord == nil || arrivalWord == "burst" else {
            throw UsageError("choose one arrival model: --arrival burst, --ramp SECONDS or --rate PER_SECOND")
        }
        if serveFolder == nil, let url, let corrected = BenchPreflight.correctedURL(url) {
            throw UsageError("--url \(url) has no scheme: did you mean --url \(corrected) ?")
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
        // A socket per device in flight, plus a temporary file each when attachments are kept (--out).
        let storing = keep != nil
        let needed = BenchSafety.descriptorsNeeded(concurrency: min(concurrency, devices), storing: storing)
        guard descriptors >= needed else {
            throw UsageError(
                "--concurrency \(concurrency) needs about \(needed) open files, but this process may open only "
                    + "\(descriptors) (ulimit -n; the hard limit is \(BenchSafety.hardOpenFileLimit)): raise it with "
                    + "'ulimit -n \(needed)' or lower --concurrency to \(BenchSafety.concurrency(forDescriptors: descriptors, storing: storing))"
            )
        }
        if concurrency > 256 { policy.fetch.receiveBufferBytes = 16 * 1024 }
        let schedule = ArrivalSchedule(
            devices: devices, model: model, jitter: .milliseconds(Int64(jitter * 1000)), seed: seed)
        let indices = Array(ArrivalSchedule.indices(devices: devices, shard: shard, of: shardCount))
        let lastArrival = schedule.offset(of: devices - 1) + .milliseconds(Int64(jitter * 1000))
        let limit =
            timeLimit.map { Duration.milliseconds(Int64($0 * 1000)) } ?? lastArrival + policy.budget + .seconds(60)
        let engine = try FetchEngine()
        defer { engine.shutdown() }
        // Nothing is stored unless --out asks for it: the body is sniffed and hashed as it arrives.
        let store = try keep.map { try AttachmentStore(folder: $0) }
        defer { store?.removeScratch() }
        let sniffer = TypeSniffer(description: .unsupportedOnly)
        let service = ServiceExtension(
            engine: engine, sniffer: sniffer, store: store, policy: policy, tracker: tracking.tracker)
        // One trial download first; a slow target is what the bench measures, so the trial waits 5 s at most.
        var trialPolicy = policy
        trialPolicy.budget = min(policy.budget, .seconds(5))
        let trialService = ServiceExtension(engine: engine, sniffer: sniffer, store: nil, policy: trialPolicy)
        let trialURL = target.url
        let trial = await runInterruptibly {
            noPreflight ? nil : await BenchPreflight.trial(service: trialService, payload: payload, url: trialURL)
        }
        if let problem = trial.value, !trial.interrupted {
            printError("richpush bench: \(problem.message)")
            return .unavailable
        }
        var report = BenchReport(
            target: target,
            config: BenchReport.Config(
                devices: devices, arrival: ramp != nil ? "ramp" : rate != nil ? "rate" : "burst", rampSeconds: ramp,
                ratePerSecond: rate, jitterSeconds: jitter, seed: seed, concurrency: concurrency,
                connections: policy.fetch.connections.rawValue, budgetSeconds: policy.budget.inSeconds,
                shardCount: shardCount),
            shards: [shard])
        report.config.network = policy.fetch.network?.name
        report.config.networkMix = mix.map { mix in
            mix.entries.map { "\(NetworkAssignment.key($0.profile))=\($0.percent)" }.joined(separator: ",")
        }
        var burst = BurstRunner(
            service: service, payload: payload, schedule: schedule, indices: indices, concurrency: concurrency,
            timeLimit: limit)
        if let mix { burst.networks = NetworkAssignment(mix: mix, devices: devices, seed: seed, service: service) }
        let runner = burst
        let display = BenchProgressLine(
            mode: noProgress ? .off : isatty(2) == 1 ? .redraw : forceProgress ? .perSecond : .off)
        printError(
            "richpush bench: \(indices.count) devices\(shardCount > 1 ? " (shard \(shard)/\(shardCount))" : "") -> \(target.url)"
        )
        let run = await runInterruptibly { [report] in
            var report = report
            if trial.interrupted {
                // Stopped during the trial: no device ran.
                report.notStarted = indices.count
                report.finalize()
            } else {
                await runner.run(into: &report, progress: { display.update($0) })
            }
            return report
        }
        report = run.value
        display.finish()
        let thresholds = BenchThresholds(minDisplayPercent: failUnder, maxP99Milliseconds: maxP99)
        report.thresholds = thresholds.evaluate(report)
        printLine(summaryText(report))
        // Path A: every device's delivery event, 75 to a request, after the burst (never inside it).
        _ = await tracking.flush()
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
        let failed = report.thresholds.filter { !$0.passed }
        for threshold in failed { printError("richpush bench: threshold failed: \(threshold.message).") }
        return failed.isEmpty ? .success : .failure
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
    static func summaryText(_ report: BenchReport) -> String { BenchSummary.text(report) }
}

/// The live progress of a bench: redrawn in place on a terminal, or one line per second for a CI log.
final class BenchProgressLine: Sendable {
    enum Mode { case off, redraw, perSecond }

    private let line: ProgressLineCore
    private let perSecond: Bool
    private let lastLine = Mutex<(at: ContinuousClock.Instant?, final: Bool)>((nil, false))

    init(mode: Mode) {
        line = ProgressLineCore(enabled: mode == .redraw)
        perSecond = mode == .perSecond
    }

    func update(_ progress: BurstRunner.Progress) {
        let final = progress.done == progress.total
        if perSecond {
            let now = ContinuousClock.now
            let due = lastLine.withLock { last -> Bool in
                guard !last.final else { return false }
                guard final || last.at.map({ now - $0 >= .seconds(1) }) ?? (now - progress.began >= .seconds(1))
                else { return false }
                last = (now, final)
                return true
            }
            if due { StandardError.write(Self.text(progress) + "\n") }
        } else {
            line.draw(final: final) { Self.text(progress) }
        }
    }

    /// `elapsed 3.0s  done 240/1000  in flight 64 (max 64)  80/s  failed 2  ETA 9s  attached 238  fallback 2`
    static func text(_ progress: BurstRunner.Progress) -> String {
        let elapsed = max(0.001, progress.elapsed.inSeconds)
        let counts = Verdict.allCases.compactMap { verdict in
            progress.verdicts[verdict].map { "\(verdict.rawValue) \($0)" }
        }.joined(separator: "  ")
        let eta = progress.remaining.map { String(format: "%.0fs", $0.inSeconds) } ?? "?"
        return String(
            format: "elapsed %.1fs  done %d/%d  in flight %d (max %d)  %.0f/s  failed %d  ETA %@  %@", elapsed,
            progress.done, progress.total, progress.inFlight, progress.maxInFlight, Double(progress.done) / elapsed,
            progress.failures, eta, counts)
    }

    func finish() { line.finish() }
}
