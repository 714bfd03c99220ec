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
        let payloadPath = try arguments.value("--payload")
        let url = try arguments.value("--url")
        let urls = try arguments.value("--urls")
        let declaredType = try arguments.value("--type")
        let givenDevices: Int? = try arguments.number("--devices", in: 1...1_000_000)
        let arrival = try arguments.value("--arrival")
        let ramp: Double? = try arguments.duration("--ramp", in: 0.001...86_400, unit: .seconds)
        var rate: Double? = try arguments.number("--rate", in: 0.001...10_000_000)
        let duration = try arguments.duration("--duration", in: 0.001...86_400, unit: .seconds)
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
        let jitter: Double = try arguments.duration("--jitter", in: 0...86_400, unit: .seconds) ?? 0
        let seed: UInt64 = try arguments.number("--seed", in: 0...UInt64.max) ?? 1
        let concurrency: Int = try arguments.number("--concurrency", in: 1...100_000) ?? 1000
        jsonPath = try arguments.value("--json")
        htmlPath = try arguments.value("--html")
        metricsPath = try arguments.value("--metrics")
        junitPath = try arguments.value("--junit")
        summaryPath = try arguments.value("--summary-md")
        logPath = try arguments.value("--log")
        if let logPath {
            do { _ = try DeviceLog.Format(path: logPath) } catch { throw UsageError("--log " + error.message) }
        }
        serveFolder = try arguments.value("--serve")
        edge = try ServeCommand.edge(&arguments)
        if edge != nil, serveFolder == nil {
            throw UsageError("--edge needs --serve DIR (or run 'richpush serve --edge')")
        }
        let keep = try arguments.value("--out")
        let timeLimit: Double? = try arguments.duration("--time-limit", in: 1...86_400, unit: .seconds)
        let failUnder: Double? = try arguments.number("--fail-under", in: 0...100)
        let maxP99: Double? = try arguments.duration("--max-p99", in: 0.001...86_400_000, unit: .milliseconds)
        let thresholds = try BenchOptions.thresholds(try arguments.values("--threshold"), for: .bench)
        let ownsHost = arguments.flag("--i-own-this-host")
        let noProgress = arguments.flag("--no-progress")
        let forceProgress = arguments.flag("--progress")
        let noPreflight = arguments.flag("--no-preflight")
        let shard = try arguments.value("--shard").map { try Shard(parsing: $0) } ?? .whole
        let startAt = try arguments.value("--start-at").map { SharedStart(try WallTime(parsing: $0)) }
        let policy = try PolicyOptions(parsing: &arguments).policy
        tracking = try TrackOptions(parsing: &arguments, policy: policy)
        let mix = try TLSOptions.networkMix(&arguments, network: policy.fetch.network)
        let audience = try Self.audience(&arguments, policy: policy)
        _ = try arguments.positionals().first.map { throw UsageError("bench takes no argument '\($0)'") }
        configuration = try BenchConfiguration(
            devices: devices, payload: payloadPath, url: url, type: declaredType, arrival: arrival, ramp: ramp,
            rate: rate, serving: serveFolder != nil, urls: urls)
        configuration.jitterSeconds = jitter
        configuration.seed = seed
        configuration.concurrency = concurrency
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
        let text = try arguments.value("--ios-mix")
        let file = try arguments.value("--audience")
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
