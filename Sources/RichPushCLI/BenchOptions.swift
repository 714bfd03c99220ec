import AssetServer
import Foundation
import POSIXKit
import RichPush
import RichPushRuns

/// The options of `richpush bench`, read into a ``BenchConfiguration`` and what only the command
/// line handles (report files, the embedded server, the progress line, Path A's flush).
struct BenchOptions {
    var configuration: BenchConfiguration
    /// `--json FILE`, `--html FILE`.
    var jsonPath: String?
    var htmlPath: String?
    var metricsPath: String?
    var junitPath: String?
    var summaryPath: String?
    /// `--log FILE`: one record per device.
    var logPath: String?
    /// `--serve DIR`: the embedded server's folder.
    var serveFolder: String?
    var progress: ProgressLine.Mode
    var tracking: TrackOptions
    /// `--edge` (with `--serve`): the embedded server emulates a CDN edge.
    var edge: EdgeOptions?

    /// `--threshold EXPR` values read for `kind`'s metrics; a malformed one is a usage error (64).
    static func thresholds(_ texts: [String], for kind: GateKind) throws(UsageError) -> [Threshold] {
        var thresholds: [Threshold] = []
        for text in texts {
            do throws(ThresholdError) {
                thresholds.append(try Threshold(parsing: text, for: kind, origin: "--threshold"))
            } catch {
                throw UsageError("--threshold: " + error.message)
            }
        }
        return thresholds
    }

    /// Reads every option out of `arguments`; a mistake is a usage error (64).
    init(parsing arguments: inout Arguments) throws {
        let payloadPath = try arguments.read(BenchCommand.payload)
        let url = try arguments.read(BenchCommand.url)
        let urls = try arguments.read(BenchCommand.urls)
        let declaredType = try arguments.read(BenchCommand.type)
        let givenDevices: Int? = try arguments.read(BenchCommand.devices)
        let arrival = try arguments.read(BenchCommand.arrival)
        let ramp: Double? = try arguments.read(BenchCommand.ramp)
        var rate: Double? = try arguments.read(BenchCommand.rate)
        let duration = try arguments.read(BenchCommand.duration)
        // A run bounded by time, as k6's constant-arrival-rate writes it: --rate R --duration D is
        // R x D devices; --devices N --duration D arrives at N / D per second.
        let devices: Int
        switch (givenDevices, rate, duration) {
        case (let count?, nil, let seconds?):
            devices = count
            rate = Double(count) / seconds
        case (nil, let perSecond?, let seconds?):
            let count = (perSecond * seconds).rounded()
            guard (1...1_000_000).contains(count) else {
                throw UsageError(
                    "--rate \(perSecond) for --duration \(seconds) s is \(Int(min(count, 1e9))) devices; a bench runs 1 to 1,000,000"
                )
            }
            devices = Int(count)
        case (_?, _?, _?):
            throw UsageError("--devices, --rate and --duration: give two of them (the third follows)")
        case (nil, _, nil):
            throw UsageError("bench needs --devices N, or --rate R with --duration D (the run is always bounded)")
        case (nil, nil, _?):
            throw UsageError("--duration needs --rate R (or --devices N): a run bounded by time has an arrival rate")
        case (let count?, _, nil):
            devices = count
        }
        if duration != nil, ramp != nil || arrival != nil {
            throw UsageError("--duration sets an arrival rate; leave out --ramp and --arrival")
        }
        let jitter = try arguments.read(BenchCommand.jitter)
        let seed = try arguments.read(Keys.seed)
        let concurrency = try arguments.read(BenchCommand.concurrency)
        jsonPath = try arguments.read(BenchCommand.json)
        htmlPath = try arguments.read(BenchCommand.html)
        metricsPath = try arguments.read(Keys.metrics)
        junitPath = try arguments.read(BenchCommand.junit)
        summaryPath = try arguments.read(Keys.summaryMarkdown)
        logPath = try arguments.read(BenchCommand.log)
        if let logPath {
            do { _ = try DeviceLog.Format(path: logPath) } catch { throw UsageError("--log " + error.message) }
        }
        serveFolder = try arguments.read(BenchCommand.serve)
        edge = try ServeCommand.edge(&arguments)
        if edge != nil, serveFolder == nil {
            throw UsageError("--edge needs --serve DIR (or run 'richpush serve --edge')")
        }
        let keep = try arguments.read(BenchCommand.out)
        let timeLimit: Double? = try arguments.read(BenchCommand.timeLimit)
        let failUnder: Double? = try arguments.read(Keys.failUnder(devices: true))
        let maxP99: Double? = try arguments.read(Keys.maxP99)
        let thresholds = try BenchOptions.thresholds(try arguments.read(Keys.threshold(bench: true)), for: .bench)
        let ownsHost = try arguments.read(BenchCommand.ownsHost)
        let noProgress = try arguments.read(Keys.noProgress)
        let forceProgress = try arguments.read(Keys.progress)
        let noPreflight = try arguments.read(BenchCommand.noPreflight)
        let shard = try arguments.read(BenchCommand.shard).map { try Shard(parsing: $0) } ?? .whole
        let startAt = try arguments.read(BenchCommand.startAt).map { SharedStart(try WallTime(parsing: $0)) }
        let policy = try PolicyOptions(parsing: &arguments).policy
        tracking = try TrackOptions(parsing: &arguments, policy: policy)
        let mix = try TLSOptions.networkMix(&arguments, network: policy.fetch.network)
        let audience = try Self.audience(&arguments, policy: policy)
        _ = try arguments.positionals().first.map { throw UsageError("bench takes no argument '\($0)'") }
        configuration = try BenchConfiguration(
            devices: devices, payload: payloadPath, url: url, type: declaredType, arrival: arrival, ramp: ramp,
            rate: rate, serving: serveFolder != nil, urls: urls)
        if let jitter { configuration.jitterSeconds = jitter }
        if let seed { configuration.seed = seed }
        if let concurrency { configuration.concurrency = concurrency }
        configuration.keepFolder = keep
        configuration.timeLimitSeconds = timeLimit
        configuration.thresholds =
            thresholds + (failUnder.map { [Threshold(.display, .greaterOrEqual, $0, origin: "--fail-under")] } ?? [])
            + (maxP99.map { [Threshold(.latency(percentile: 99), .lessOrEqual, $0, origin: "--max-p99")] } ?? [])
        configuration.ownsHost = ownsHost
        configuration.preflight = !noPreflight
        configuration.shard = shard
        configuration.startAt = startAt
        configuration.policy = policy
        configuration.networkMix = mix
        configuration.audience = audience
        progress = ProgressLine.mode(
            progress: forceProgress, noProgress: noProgress, stderrIsTerminal: isatty(2) == 1)
    }

    /// `--ios-mix MIX` or `--audience FILE` (not both, and not beside `--ios` or `--linked-sdk`, which
    /// name one phone).
    static func audience(_ arguments: inout Arguments, policy: ExtensionPolicy) throws -> AudienceMix? {
        let text = try arguments.read(Keys.iosMix(payloads: false))
        let file = try arguments.read(Keys.audience)
        guard text != nil || file != nil else { return nil }
        guard text == nil || file == nil else { throw UsageError("give --ios-mix or --audience, not both") }
        guard policy.device == .standard else {
            throw UsageError("--ios-mix and --audience draw each device's phone; leave out --ios and --linked-sdk")
        }
        var source = text ?? ""
        if let file {
            do {
                let descriptor = try SystemCall.openRegularFile(file)
                defer { close(descriptor) }
                source = String(
                    decoding: try SystemCall.readAll(descriptor, upTo: 64 * 1024, path: file), as: UTF8.self)
            } catch {
                throw CommandFailure(.dataError, "--audience: cannot read \(file): \(error.message)")
            }
        }
        return try AudienceMix(parsing: source)
    }
}
