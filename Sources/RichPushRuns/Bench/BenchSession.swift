import POSIXKit
import RichPush

/// A bench run set up from its ``BenchConfiguration``: the payload, the checks, the engine and the
/// extension every device runs, ready for the trial download and the burst.
///
/// ```swift
/// let session = try BenchSession(configuration)   // ConfigurationError: a mistake found before the run
/// defer { session.close() }
/// if let problem = await session.trial() { print(problem.message) }
/// let result = await session.run(progress: { print($0.done) })
/// ```
public struct BenchSession: Sendable {
    package let configuration: BenchConfiguration
    /// The payload every device receives.
    package let payload: [UInt8]
    /// The target the report names.
    package let target: BenchReport.Target
    /// This run's identity: a random id, the shard, and the digest of its options.
    package let identity: RunIdentity
    /// The positions in the whole schedule this shard runs.
    package let indices: [Int]
    /// The URLs devices draw from, when the run has a list or a template, and each entry's payload.
    package let list: URLList?
    private let listPayloads: [[UInt8]]
    private let schedule: ArrivalSchedule
    private let timeLimit: Duration
    private let engine: FetchEngine
    private let store: AttachmentStore?
    private let service: ServiceExtension
    private let trialService: ServiceExtension

    /// The receive buffer for `concurrency` devices in flight: 128 KiB up to 256 (fewer reads per
    /// download, as curl's own 100 KiB), libcurl's default 16 KiB above 256, 8 KiB above 1,000.
    public static func receiveBufferBytes(concurrency: Int) -> Int? {
        concurrency > 1000 ? 8 * 1024 : concurrency > 256 ? 16 * 1024 : 96 * 1024
    }

    /// Builds the payload, checks the host and the open-file limit (raised to the hard limit), and
    /// starts the engine; a mistake, or an engine that cannot start, throws `ConfigurationError`; a
    /// store that cannot be made throws its own error.
    package init(_ configuration: BenchConfiguration) throws {
        var configuration = configuration
        (payload, target) = try configuration.payload()
        try configuration.checkHost(target)
        list = try configuration.urlList()
        if let list {
            try configuration.checkHosts(list)
            var payloads: [[UInt8]] = []
            for entry in list.entries {
                payloads.append(try configuration.payload(for: entry.template.representative).bytes)
            }
            listPayloads = payloads
        } else {
            listPayloads = []
        }
        // Every hop stays on this machine unless the user owns the host (redirects included), and
        // each response's cache headers are read for the report.
        if !configuration.ownsHost { configuration.policy.fetch.redirectsStayLocal = true }
        configuration.policy.fetch.readsCacheHeaders = true
        try configuration.checkDescriptors(DescriptorBudget.current(raising: true))
        // libcurl's receive buffer is held by every transfer in flight: 64 KiB reads less often, smaller
        // keeps thousands of devices in flight within memory (about 8 MB per thousand per 8 KiB).
        if let bytes = BenchSession.receiveBufferBytes(concurrency: configuration.concurrency) {
            configuration.policy.fetch.receiveBufferBytes = bytes
        }
        let policy = configuration.policy
        let jitter = Duration.milliseconds(Int64(configuration.jitterSeconds * 1000))
        schedule = ArrivalSchedule(
            devices: configuration.devices, model: configuration.arrival.model, jitter: jitter,
            seed: configuration.seed)
        indices = Array(
            ArrivalSchedule.indices(
                devices: configuration.devices, shard: configuration.shard.index, of: configuration.shard.count))
        let lastArrival = schedule.offset(of: configuration.devices - 1) + jitter
        timeLimit =
            configuration.timeLimitSeconds.map { Duration.milliseconds(Int64($0 * 1000)) }
            ?? lastArrival + policy.budget + .seconds(60)
        identity = RunIdentity(
            runID: RunIdentity.newRunID(), shard: configuration.shard.index, shardCount: configuration.shard.count,
            optionsDigest: configuration.optionsDigest(target: target))
        do { engine = try FetchEngine() } catch { throw ConfigurationError(.unavailable, error.engineStartMessage) }
        // Nothing is stored unless an output folder is given: the body is sniffed and hashed as it arrives.
        do { store = try configuration.keepFolder.map { try AttachmentStore(folder: $0) } } catch {
            engine.shutdown()
            throw error
        }
        let sniffer = TypeSniffer(description: .unsupportedOnly)
        var service = ServiceExtension(
            engine: engine, sniffer: sniffer, store: store, policy: policy, tracker: configuration.tracker)
        // The report reads outcomes only: no device writes a mutated payload.
        service.emitsPayload = false
        self.service = service
        // A slow target is what the bench measures, so the trial waits 5 s at most.
        var trialPolicy = policy
        trialPolicy.budget = min(policy.budget, .seconds(5))
        trialService = ServiceExtension(engine: engine, sniffer: sniffer, store: nil, policy: trialPolicy)
        self.configuration = configuration
    }

    /// `2000 devices (shard 1/4) -> https://...`: what the run is about to do.
    package var startLine: String {
        let shard = configuration.shard
        let urls = list.flatMap {
            $0.file == nil ? nil : " and \($0.entries.count - 1) more URL(s) of \(target.urls ?? "")"
        }
        return
            "\(indices.count) devices\(shard.count > 1 ? " (shard \(shard.index)/\(shard.count))" : "") -> \(target.url)"
            + (urls ?? "")
    }

    /// One trial download (unless ``BenchConfiguration/preflight`` is off): the problem that would
    /// fail every device the same way, or nil.
    package func trial() async -> BenchPreflight.Problem? {
        guard configuration.preflight else { return nil }
        return await BenchPreflight.trial(service: trialService, payload: payload, url: target.url)
    }

    /// Runs the burst (or, when `startingDevices` is false, none of it: every device counts as not
    /// started) and checks the thresholds on the finalized report.
    package func run(
        startingDevices: Bool = true, log: DeviceLog? = nil,
        progress: @escaping @Sendable (BurstRunner.Progress) -> Void = { _ in }
    ) async -> BenchResult {
        var report = BenchReport(
            target: target, config: configuration.reportConfig, shards: [configuration.shard.index])
        report.urls = list.map(URLBreakdown.init)
        // The shared start, waited for here; cancelled while waiting, no device runs.
        let reading: WallClock.Reading?
        if !startingDevices {
            reading = nil
        } else if let start = configuration.startAt {
            reading = try? await start.wait()
        } else {
            reading = WallClock.read()
        }
        if let reading {
            let sharedStart = configuration.startAt?.time
            report.start = BenchReport.Start(
                at: sharedStart?.rfc3339,
                shards: [.init(shard: configuration.shard.index, reading: reading, sharedStart: sharedStart)])
            var burst = BurstRunner(
                service: service, payload: payload, schedule: schedule, indices: indices,
                concurrency: configuration.concurrency, timeLimit: timeLimit)
            burst.list = list
            burst.listPayloads = listPayloads
            burst.shardIndex = configuration.shard.index
            burst.seed = configuration.seed
            burst.log = log
            if let audience = configuration.audience {
                burst.networks = NetworkAssignment(
                    mix: configuration.networkMix, audience: audience, devices: configuration.devices,
                    seed: configuration.seed, service: service)
            } else if let mix = configuration.networkMix {
                burst.networks = NetworkAssignment(
                    mix: mix, devices: configuration.devices, seed: configuration.seed, service: service)
            }
            if let sharedStart { burst.lateness = reading.time - sharedStart }
            await burst.run(into: &report, progress: progress)
        } else {
            report.notStarted = indices.count
            report.finalize()
        }
        report.identity = identity
        report.decide(configuration.thresholds)
        return BenchResult(report: report)
    }

    /// A session for `body` alone: everything it started is stopped when `body` returns or throws.
    package static func with<T>(_ configuration: BenchConfiguration, _ body: (BenchSession) async throws -> T)
        async throws -> T
    {
        let session = try BenchSession(configuration)
        defer { session.close() }
        return try await body(session)
    }

    /// Stops the engine and removes the store's scratch files.
    package func close() {
        engine.shutdown()
        store?.removeScratch()
    }

    /// Runs a bench as `richpush bench` does: the trial download (unless
    /// ``BenchConfiguration/preflight`` is off), then the burst, then the gate. A target the trial
    /// finds unreachable or untrusted throws `ConfigurationError` (`unavailable`) before any device
    /// starts; a configuration that cannot run throws `ConfigurationError` too.
    ///
    /// ```swift
    /// let bench = try BenchConfiguration(url: "https://127.0.0.1:8443/hero.jpg", devices: 200)
    /// let result = try await BenchSession.run(bench)
    /// print(result.displayRate, result.passed)
    /// ```
    public static func run(_ configuration: BenchConfiguration) async throws -> BenchResult {
        do {
            return try await with(configuration) { session in
                if let problem = await session.trial() {
                    throw ConfigurationError(.unavailable, problem.message)
                }
                return await session.run()
            }
        } catch let error as IOFailure {
            throw ConfigurationError(error)
        }
    }
}

/// What a bench run produced: its report, and the gate's decision.
public struct BenchResult: Sendable {
    package var report: BenchReport

    package init(report: BenchReport) { self.report = report }

    /// The devices the run scheduled.
    public var devices: Int { report.devices }

    /// The devices whose attachment would show within the budget.
    public var attached: Int { report.attached }

    /// The share of devices whose attachment would show, from 0 to 1.
    public var displayRate: Double { report.displayRate }

    /// Whether every threshold of the gate was met (`richpush bench`'s exit status 0).
    public var passed: Bool { decision.passed }

    /// The report as `richpush bench --json` writes it (schema `bench/report.schema.json`).
    public func json() throws -> String { try report.json() }

    /// The gate's decision, read from the report's thresholds.
    package var decision: GateDecision { GateDecision(report) }

    /// The thresholds that failed, in order.
    package var failedThresholds: [ThresholdResult] { decision.failed }

}
