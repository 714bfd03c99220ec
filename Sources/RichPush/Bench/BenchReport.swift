import Foundation

/// What one emulated device lived through, as the burst runner records it.
public struct DeviceResult: Sendable {
    public var verdict: Verdict
    public var reason: ReasonCode
    public var bytes: Int64
    /// Download milestones (cumulative from the transfer's start), when a download happened.
    public var dns: Duration?, connect: Duration?, tls: Duration?, firstByte: Duration?, download: Duration?
    /// Offsets from the start of the run: when the push was scheduled to arrive, when the device
    /// actually started (later when the client's own concurrency cap held it back), when it ended.
    public var scheduled: Duration, started: Duration, ended: Duration
    /// Whether the concurrency cap delayed the start.
    public var heldBack: Bool

    public init(
        verdict: Verdict, reason: ReasonCode, bytes: Int64, dns: Duration? = nil, connect: Duration? = nil,
        tls: Duration? = nil, firstByte: Duration? = nil, download: Duration? = nil, scheduled: Duration,
        started: Duration, ended: Duration, heldBack: Bool = false
    ) {
        self.verdict = verdict
        self.reason = reason
        self.bytes = bytes
        self.dns = dns
        self.connect = connect
        self.tls = tls
        self.firstByte = firstByte
        self.download = download
        self.scheduled = scheduled
        self.started = started
        self.ended = ended
        self.heldBack = heldBack
    }
}

/// The report of a burst benchmark: mergeable across shards (see `bench/report.schema.json`).
///
/// Everything is kept as counts and fixed-layout histograms; percentiles, rates and throughput are
/// derived from them by ``finalize()``, so merging the JSON of N shards gives exactly the report one
/// machine would have produced for the same measurements.
public struct BenchReport: Sendable, Codable, Equatable {
    public static let schemaName = "richpush.bench/1"
    /// The histogram phases, in report order.
    public static let phases = ["dns", "connect", "tls", "first_byte", "download", "end_to_end"]

    public struct Target: Sendable, Codable, Equatable {
        public var url: String
        public var type: String
        public var payload: String?

        public init(url: String, type: String, payload: String?) {
            self.url = url
            self.type = type
            self.payload = payload
        }
    }

    public struct Config: Sendable, Codable, Equatable {
        /// Devices in the whole run (all shards).
        public var devices: Int
        public var arrival: String
        public var rampSeconds: Double?
        public var ratePerSecond: Double?
        public var jitterSeconds: Double
        public var seed: UInt64
        public var concurrency: Int
        public var connections: String
        public var budgetSeconds: Double
        public var shardCount: Int

        public init(
            devices: Int, arrival: String, rampSeconds: Double?, ratePerSecond: Double?, jitterSeconds: Double,
            seed: UInt64, concurrency: Int, connections: String, budgetSeconds: Double, shardCount: Int
        ) {
            self.devices = devices
            self.arrival = arrival
            self.rampSeconds = rampSeconds
            self.ratePerSecond = ratePerSecond
            self.jitterSeconds = jitterSeconds
            self.seed = seed
            self.concurrency = concurrency
            self.connections = connections
            self.budgetSeconds = budgetSeconds
            self.shardCount = shardCount
        }
    }

    public struct ClientDelay: Sendable, Codable, Equatable {
        /// Devices the client's own concurrency cap started late.
        public var devices: Int
        public var maxMilliseconds: Double
    }

    public struct Second: Sendable, Codable, Equatable {
        public var second: Int
        public var arrivals = 0
        public var completions = 0
        public var failures = 0
        /// Devices in flight at some point during this second.
        public var inFlight = 0
        public var bytes: Int64 = 0
        /// End-to-end latency of the devices that completed in this second.
        public var latency = LatencyHistogram()
        /// Derived: p50/p90/p99 of `latency`, in milliseconds.
        public var latencyMilliseconds: [String: Double] = [:]

        public init(second: Int) { self.second = second }
    }

    public var schema = BenchReport.schemaName
    public var target: Target
    public var config: Config
    /// The shards (1-based) this report covers.
    public var shards: [Int]
    /// Devices in this report.
    public var devices = 0
    /// Devices not run to completion: never launched before the time limit, or cut short by an interruption.
    public var notStarted = 0
    public var verdicts: [String: Int] = [:]
    public var reasons: [String: Int] = [:]
    public var attached = 0
    public var bytes: Int64 = 0
    /// Wall time of the run (the longest shard's, after a merge).
    public var durationSeconds = 0.0
    public var clientDelayed = ClientDelay(devices: 0, maxMilliseconds: 0)
    public var histograms: [String: LatencyHistogram] = [:]
    public var timeline: [Second] = []
    // Derived by finalize().
    public var displayRate = 0.0
    public var devicesPerSecond = 0.0
    public var megabytesPerSecond = 0.0
    public var percentilesMilliseconds: [String: [String: Double]] = [:]

    public init(target: Target, config: Config, shards: [Int]) {
        self.target = target
        self.config = config
        self.shards = shards
        for phase in Self.phases { histograms[phase] = LatencyHistogram() }
    }

    /// Adds one device.
    public mutating func add(_ device: DeviceResult) {
        devices += 1
        verdicts[device.verdict.rawValue, default: 0] += 1
        reasons[device.reason.rawValue, default: 0] += 1
        if device.verdict == .attached { attached += 1 }
        bytes += device.bytes
        if device.heldBack {
            clientDelayed.devices += 1
            clientDelayed.maxMilliseconds = max(
                clientDelayed.maxMilliseconds, (device.started - device.scheduled).inMilliseconds)
        }
        let pairs: [(String, Duration?)] = [
            ("dns", device.dns), ("connect", device.connect), ("tls", device.tls), ("first_byte", device.firstByte),
            ("download", device.download), ("end_to_end", device.ended - device.scheduled),
        ]
        for (phase, value) in pairs {
            if let value { histograms[phase, default: LatencyHistogram()].record(value) }
        }
        let arrival = Self.second(of: device.scheduled)
        let start = Self.second(of: device.started)
        let end = Self.second(of: device.ended)
        grow(to: max(arrival, end))
        timeline[arrival].arrivals += 1
        timeline[end].completions += 1
        timeline[end].bytes += device.bytes
        if device.verdict != .attached { timeline[end].failures += 1 }
        timeline[end].latency.record(device.ended - device.scheduled)
        for second in start...max(start, end) { timeline[second].inFlight += 1 }
    }

    /// Adds another report of the same run (another shard).
    public mutating func merge(_ other: BenchReport) throws(BenchReportError) {
        guard other.schema == schema else { throw BenchReportError("schema '\(other.schema)' is not '\(schema)'") }
        guard other.config == config, other.target == target else {
            throw BenchReportError("the reports come from different runs (target or configuration differ)")
        }
        guard Set(shards).isDisjoint(with: other.shards) else {
            throw BenchReportError("shard \(Set(shards).intersection(other.shards).sorted()) appears twice")
        }
        shards = (shards + other.shards).sorted()
        devices += other.devices
        notStarted += other.notStarted
        verdicts.merge(other.verdicts, uniquingKeysWith: +)
        reasons.merge(other.reasons, uniquingKeysWith: +)
        attached += other.attached
        bytes += other.bytes
        durationSeconds = max(durationSeconds, other.durationSeconds)
        clientDelayed.devices += other.clientDelayed.devices
        clientDelayed.maxMilliseconds = max(clientDelayed.maxMilliseconds, other.clientDelayed.maxMilliseconds)
        for (phase, histogram) in other.histograms { histograms[phase, default: LatencyHistogram()].merge(histogram) }
        grow(to: (other.timeline.last?.second ?? -1))
        for second in other.timeline {
            timeline[second.second].arrivals += second.arrivals
            timeline[second.second].completions += second.completions
            timeline[second.second].failures += second.failures
            timeline[second.second].inFlight += second.inFlight
            timeline[second.second].bytes += second.bytes
            timeline[second.second].latency.merge(second.latency)
        }
        finalize()
    }

    /// Computes the derived fields from the counts and histograms.
    public mutating func finalize() {
        displayRate = devices == 0 ? 0 : Double(attached) / Double(devices)
        devicesPerSecond = durationSeconds > 0 ? Double(devices) / durationSeconds : 0
        megabytesPerSecond = durationSeconds > 0 ? Double(bytes) / 1_000_000 / durationSeconds : 0
        percentilesMilliseconds = histograms.mapValues(\.percentilesMilliseconds)
        for index in timeline.indices {
            let latency = timeline[index].latency
            timeline[index].latencyMilliseconds =
                latency.count == 0
                ? [:]
                : [
                    "p50": Double(latency.value(atQuantile: 0.5)) / 1000,
                    "p90": Double(latency.value(atQuantile: 0.9)) / 1000,
                    "p99": Double(latency.value(atQuantile: 0.99)) / 1000,
                ]
        }
    }

    private mutating func grow(to second: Int) {
        while timeline.count <= second { timeline.append(Second(second: timeline.count)) }
    }

    private static func second(of offset: Duration) -> Int { max(0, Int(offset.components.seconds)) }

    /// The report as JSON (snake_case keys, sorted).
    public func json() throws -> String { try BatchJSON.pretty(self) }

    /// Reads a report written by ``json()``.
    public static func read(_ data: Data) throws(BenchReportError) -> BenchReport {
        do { return try BatchJSON.decoder.decode(BenchReport.self, from: data) } catch {
            throw BenchReportError("not a richpush bench report: \(error)")
        }
    }
}

/// A report that cannot be read or merged.
public struct BenchReportError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
