import Foundation
import RichPush

/// The report of a burst benchmark: mergeable across shards (see `bench/report.schema.json`).
///
/// Everything is kept as counts and fixed-layout histograms; percentiles, rates and throughput are
/// derived from them by ``finalize()``, so merging the JSON of N shards gives exactly the report one
/// machine would have produced for the same measurements.
package struct BenchReport: Sendable, Codable, Equatable {
    package static let schemaName = "richpush.bench/2"
    /// The histogram phases, in report order.
    package static let phases = ["dns", "connect", "tls", "first_byte", "download", "end_to_end"]

    package struct Target: Sendable, Codable, Equatable {
        package var url: String
        package var type: String
        package var payload: String?
        /// The `--urls` file devices drew their URLs from (``url`` is then its first entry).
        package var urls: String?

        package init(url: String, type: String, payload: String?) {
            self.url = url
            self.type = type
            self.payload = payload
        }
    }

    package struct Config: Sendable, Codable, Equatable {
        /// Devices in the whole run (all shards).
        package var devices: Int
        package var arrival: String
        package var rampSeconds: Double?
        package var ratePerSecond: Double?
        package var jitterSeconds: Double
        package var seed: UInt64
        package var concurrency: Int
        package var connections: String
        package var budgetSeconds: Double
        package var shardCount: Int
        /// The one profile every device downloads over, or nil.
        package var network: String?
        /// The network mix devices are drawn from (drawn with `seed`), or nil.
        package var networkMix: String?
        /// The audience devices are drawn from (``AudienceMix``, drawn with `seed`), or nil.
        package var iosMix: String?

        package init(
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

    package struct ClientDelay: Sendable, Codable, Equatable {
        /// Devices the client's own concurrency cap started late.
        package var devices: Int
        package var maxMilliseconds: Double
    }

    package struct Second: Sendable, Codable, Equatable {
        package var second: Int
        package var arrivals = 0
        package var completions = 0
        package var failures = 0
        /// Devices in flight at some point during this second.
        package var inFlight = 0
        /// The most devices in flight at once during this second (summed over shards after a merge):
        /// read when a device starts or ends; a second in which none did holds the same devices from
        /// its start to its end, so its peak is `inFlight` (``BenchReport/finalize()``).
        package var peakInFlight = 0
        package var bytes: Int64 = 0
        /// End-to-end latency of the devices that completed in this second.
        package var latency = LatencyHistogram()
        /// Derived: p50/p90/p99 of `latency`, in milliseconds.
        package var latencyMilliseconds: [String: Double] = [:]

        package init(second: Int) { self.second = second }

        /// Adds the same bucket of another shard: every series of the timeline adds up here (a new
        /// series is one more line), each count with a check.
        mutating func merge(_ other: Second) throws(ReportDamage) {
            let field = "timeline[\(other.second)]"
            try ReportDamage.add(&arrivals, other.arrivals, field + ".arrivals")
            try ReportDamage.add(&completions, other.completions, field + ".completions")
            try ReportDamage.add(&failures, other.failures, field + ".failures")
            try ReportDamage.add(&inFlight, other.inFlight, field + ".in_flight")
            try ReportDamage.add(&peakInFlight, other.peakInFlight, field + ".peak_in_flight")
            try ReportDamage.add(&bytes, other.bytes, field + ".bytes")
            try latency.merge(other.latency)
        }
    }

    /// The devices of one network profile (the run's one profile, or one of its mix): counts and end-to-end latency.
    package struct Network: Sendable, Codable, Equatable {
        package var devices = 0
        package var attached = 0
        package var verdicts: [String: Int] = [:]
        /// End-to-end latency of the profile's devices.
        package var latency = LatencyHistogram()
        /// Derived: `attached / devices`.
        package var displayRate = 0.0
        /// Derived: the statistics of `latency`, in milliseconds (the keys of `percentiles_milliseconds`).
        package var latencyMilliseconds: [String: Double] = [:]

        package init() {}

        mutating func add(_ device: DeviceResult) {
            devices += 1
            if device.verdict == .attached { attached += 1 }
            verdicts[device.verdict.rawValue, default: 0] += 1
            latency.record(device.ended - device.scheduled)
        }

        mutating func merge(_ other: Network, _ field: String) throws(ReportDamage) {
            try ReportDamage.add(&devices, other.devices, field + ".devices")
            try ReportDamage.add(&attached, other.attached, field + ".attached")
            try ReportDamage.add(&verdicts, other.verdicts, field + ".verdicts")
            try latency.merge(other.latency)
        }

        func check(_ field: String) throws(ReportDamage) {
            _ = try ReportDamage.nonNegative(devices, field + ".devices")
            _ = try ReportDamage.nonNegative(attached, field + ".attached")
            try ReportDamage.nonNegative(verdicts, field + ".verdicts")
        }

        mutating func finalize() {
            displayRate = Rounding.share(devices == 0 ? 0 : Double(attached) / Double(devices))
            latencyMilliseconds = latency.percentilesMilliseconds
        }
    }

    package var schema = BenchReport.schemaName
    package var target: Target
    package var config: Config
    /// The shards (1-based) this report covers.
    package var shards: [Int]
    /// Devices in this report.
    package var devices = 0
    /// Devices not run to completion: never launched before the time limit, or cut short by an interruption.
    package var notStarted = 0
    package var verdicts: [String: Int] = [:]
    package var reasons: [String: Int] = [:]
    /// One message per reason, as the devices saw it (the first in sort order, so merges are stable).
    package var samples: [String: String] = [:]
    /// HTTP status code -> devices that got it; devices without a response are not counted here.
    package var statusCodes: [String: Int] = [:]
    /// Phase -> failed devices that never reached it (not counted as 0 ms in its histogram).
    package var notReached: [String: Int] = [:]
    package var attached = 0
    package var bytes: Int64 = 0
    /// Wall time of the run (the longest shard's, after a merge).
    package var durationSeconds = 0.0
    package var clientDelayed = ClientDelay(devices: 0, maxMilliseconds: 0)
    /// What the benchmarking client itself used, to tell a saturated client from a slow host.
    package var client = ClientLoad()
    package var histograms: [String: LatencyHistogram] = [:]
    package var timeline: [Second] = []
    /// The gate's thresholds (those given, then the defaults; see ``Gate``), each with its measured
    /// value and PASS/FAIL. A merge recomputes them for the whole run.
    package var thresholds: [ThresholdResult] = []
    /// Whether every threshold was met: the gate's decision (nil in reports of older versions).
    package var passed: Bool?
    /// The expanded view per device (`shows`, `default`, `would-crash`, `configuration-error`), when
    /// the app's content extensions are known; absent otherwise.
    package var contentExtensions: [String: Int]?
    /// Which run and which shard this report is, for `report merge` (see ``RunIdentity``); absent in
    /// reports of older versions.
    package var identity: RunIdentity?
    /// Profile key (`3g`) -> its devices, when the run used network profiles; absent over loopback.
    /// The rows add up to `devices` and `attached`.
    package var networks: [String: Network]?
    /// Phone key (`17.0`, `18.0@16.0`, `DeviceVersion.key`) -> its devices, when the run had an
    /// audience (`--ios-mix`); absent otherwise. The rows add up to `devices` and `attached`.
    package var audience: [String: Network]?
    /// When each shard began, on which clock, against which shared start (`--start-at`); absent in
    /// reports of older versions (see ``Start``).
    package var start: Start?
    /// HTTP version ("1.1", "2") -> devices whose response came over it; devices without a response
    /// are not counted. Absent in reports of older versions.
    package var httpVersions: [String: Int]?
    /// What the caches in front of the origin did (``CacheSummary``); absent in reports of older versions.
    package var cache: CacheSummary?
    /// The results by entry of the URL list or by template (``URLBreakdown``), when the run had a list
    /// (`--urls`) or a template; absent otherwise.
    package var urls: URLBreakdown?
    /// The timeline at the resolution the run's length calls for (``BurstTimeline``); absent in reports
    /// of older versions.
    package var burstTimeline: BurstTimeline?
    // Derived by finalize().
    package var displayRate = 0.0
    package var devicesPerSecond = 0.0
    package var megabytesPerSecond = 0.0
    package var percentilesMilliseconds: [String: [String: Double]] = [:]
    /// 2xx, 3xx, 4xx, 5xx and no_response -> devices.
    package var statusClasses: [String: Int] = [:]

    /// A report of `target` (its URL kept without a user name or password, ``URLCredentials``).
    package init(target: Target, config: Config, shards: [Int]) {
        var target = target
        target.url = URLCredentials.stripped(target.url)
        self.target = target
        self.config = config
        self.shards = shards
        for phase in Self.phases { histograms[phase] = LatencyHistogram() }
        httpVersions = [:]
        cache = CacheSummary()
        burstTimeline = BurstTimeline()
    }

    /// Adds one device.
    package mutating func add(_ device: DeviceResult) {
        devices += 1
        verdicts[device.verdict.rawValue, default: 0] += 1
        reasons[device.reason.rawValue, default: 0] += 1
        if let message = device.message {
            let reason = device.reason.rawValue
            samples[reason] = samples[reason].map { Swift.min($0, message) } ?? message
        }
        if device.status > 0 { statusCodes[String(device.status), default: 0] += 1 }
        if device.verdict == .attached { attached += 1 }
        if let view = device.contentExtension {
            contentExtensions = (contentExtensions ?? [:]).merging([view.rawValue: 1], uniquingKeysWith: +)
        }
        bytes += device.bytes
        if device.heldBack {
            clientDelayed.devices += 1
            clientDelayed.maxMilliseconds = max(
                clientDelayed.maxMilliseconds, (device.started - device.scheduled).inMilliseconds)
        }
        client.schedulingLag.record(device.schedulingLag)
        let pairs: [(String, Duration?)] = [
            ("dns", device.dns), ("connect", device.connect), ("tls", device.tls), ("first_byte", device.firstByte),
            ("download", device.download),
        ]
        for (phase, value) in pairs {
            if let value, value > .zero {
                histograms[phase, default: LatencyHistogram()].record(value)
            } else if device.verdict != .attached {
                notReached[phase, default: 0] += 1
            }
        }
        histograms["end_to_end", default: LatencyHistogram()].record(device.ended - device.scheduled)
        for call in device.sdkCalls { addSDKCall(call) }
        if let network = device.network {
            var rows = networks ?? [:]
            rows[network, default: Network()].add(device)
            networks = rows
        }
        if let phone = device.phone {
            var rows = audience ?? [:]
            rows[phone, default: Network()].add(device)
            audience = rows
        }
        if !device.httpVersion.isEmpty { httpVersions?[device.httpVersion, default: 0] += 1 }
        cache?.add(device)
        urls?.add(device)
        burstTimeline?.add(device)
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

    /// The histogram key of an SDK's call (`sdk_call:delivery metric`, `... (modelled)` without an
    /// endpoint), and of those of its calls that got no 2xx answer (`sdk_call_failed:...`).
    package static func sdkCallKey(_ call: SDKCallReport, failed: Bool = false) -> String {
        (failed ? "sdk_call_failed:" : "sdk_call:") + call.name + (call.modelled ? " (modelled)" : "")
    }

    /// One SDK call of a device: its latency, and whether it failed.
    private mutating func addSDKCall(_ call: SDKCallReport) {
        let latency = Duration.microseconds(Int64(max(0, call.latencyMilliseconds) * 1000))
        histograms[Self.sdkCallKey(call), default: LatencyHistogram()].record(latency)
        if !call.modelled, !(200..<300).contains(call.status ?? 0) {
            histograms[Self.sdkCallKey(call, failed: true), default: LatencyHistogram()].record(latency)
        }
    }

    /// The devices this report was to run: those run and those never run (``notStarted``).
    package var plannedDevices: Int {
        let (sum, overflow) = devices.addingReportingOverflow(notStarted)
        return overflow ? Int.max : sum
    }

    /// Notes that `count` devices were in flight at once at `offset` from the start.
    package mutating func notePeakInFlight(_ count: Int, at offset: Duration) {
        let second = Self.second(of: offset)
        grow(to: second)
        timeline[second].peakInFlight = max(timeline[second].peakInFlight, count)
        burstTimeline?.notePeakInFlight(count, at: offset)
    }

    /// Applies the gate: `given` and the defaults, checked against this (finalized) report.
    package mutating func decide(_ given: [Threshold]) {
        thresholds = Gate.results(for: self, thresholds: given)
        passed = thresholds.allSatisfy(\.passed)
    }

    /// The longest timeline a report may carry: a week of seconds. A longer one (or one whose seconds
    /// are not in order) is a damaged file, and merging it would allocate without bound.
    package static let maxTimelineSeconds = 7 * 86_400
    /// The most shards a run may have: more is a damaged file (a merge lists the shards it covers).
    package static let maxShards = 100_000

    /// Adds another report of the same run (another shard). Every count is added with a check; on
    /// any error this report is left as it was.
    package mutating func merge(_ other: BenchReport) throws(BenchReportError) {
        guard other.schema == schema else { throw BenchReportError("schema '\(other.schema)' is not '\(schema)'") }
        guard other.config == config, other.target == target else {
            throw BenchReportError("the reports come from different runs (target or configuration differ)")
        }
        guard Set(shards).isDisjoint(with: other.shards) else {
            throw BenchReportError("shard \(Set(shards).intersection(other.shards).sorted()) appears twice")
        }
        var merged = self
        do throws(ReportDamage) {
            try merged.add(other)
        } catch {
            throw BenchReportError("merging it: \(error.message)")
        }
        merged.thresholds = []
        merged.passed = nil
        merged.finalize()
        self = merged
    }

    private mutating func add(_ other: BenchReport) throws(ReportDamage) {
        shards = (shards + other.shards).sorted()
        try ReportDamage.add(&devices, other.devices, "devices")
        try ReportDamage.add(&notStarted, other.notStarted, "not_started")
        try ReportDamage.add(&verdicts, other.verdicts, "verdicts")
        try ReportDamage.add(&reasons, other.reasons, "reasons")
        samples.merge(other.samples, uniquingKeysWith: { Swift.min($0, $1) })
        try ReportDamage.add(&statusCodes, other.statusCodes, "status_codes")
        try ReportDamage.add(&notReached, other.notReached, "not_reached")
        try ReportDamage.add(&attached, other.attached, "attached")
        if let theirs = other.contentExtensions {
            var mine = contentExtensions ?? [:]
            try ReportDamage.add(&mine, theirs, "content_extensions")
            contentExtensions = mine
        }
        try ReportDamage.add(&bytes, other.bytes, "bytes")
        durationSeconds = max(durationSeconds, other.durationSeconds)
        try ReportDamage.add(&clientDelayed.devices, other.clientDelayed.devices, "client_delayed.devices")
        clientDelayed.maxMilliseconds = max(clientDelayed.maxMilliseconds, other.clientDelayed.maxMilliseconds)
        try client.merge(other.client)
        for (phase, histogram) in other.histograms {
            try histograms[phase, default: LatencyHistogram()].merge(histogram)
        }
        grow(to: (other.timeline.last?.second ?? -1))
        // Both timelines count from the same moment (the shared start, or each shard's own), so their
        // buckets add up index by index.
        for second in other.timeline { try timeline[second.second].merge(second) }
        start = Self.merged(start, other.start)
        if var mine = identity, let theirs = other.identity {
            mine.runs = (mine.runs + theirs.runs).sorted { $0.shard < $1.shard }
            identity = mine
        } else {
            identity = nil
        }
        if let others = other.networks {
            var rows = networks ?? [:]
            for (name, row) in others { try rows[name, default: Network()].merge(row, "networks.\(name)") }
            networks = rows
        }
        if let others = other.audience {
            var rows = audience ?? [:]
            for (name, row) in others { try rows[name, default: Network()].merge(row, "audience.\(name)") }
            audience = rows
        }
        // The newer series merge when both shards have them; a shard of an older version drops them.
        if var mine = httpVersions, let theirs = other.httpVersions {
            try ReportDamage.add(&mine, theirs, "http_versions")
            httpVersions = mine
        } else {
            httpVersions = nil
        }
        if var mine = cache, let theirs = other.cache {
            try mine.merge(theirs)
            cache = mine
        } else {
            cache = nil
        }
        if var mine = urls, let theirs = other.urls {
            try mine.merge(theirs)
            urls = mine
        } else if urls != nil || other.urls != nil {
            throw ReportDamage("one report has a URL breakdown and the other not: they come from different runs")
        }
        if var mine = burstTimeline, let theirs = other.burstTimeline {
            try mine.merge(theirs)
            burstTimeline = mine
        } else {
            burstTimeline = nil
        }
    }

    /// Throws when a number in a report read back from a file cannot be a measurement: a negative
    /// count, a duration that is not a finite positive number, a timeline out of order or longer than
    /// ``maxTimelineSeconds``, a shard outside `1...shard_count`.
    func check() throws(ReportDamage) {
        _ = try ReportDamage.nonNegative(config.devices, "config.devices")
        _ = try ReportDamage.nonNegative(config.concurrency, "config.concurrency")
        guard (1...Self.maxShards).contains(config.shardCount),
            shards.allSatisfy({ (1...config.shardCount).contains($0) })
        else {
            throw ReportDamage("shards \(shards) do not fit config.shard_count \(config.shardCount)")
        }
        for (value, field) in [
            (devices, "devices"), (notStarted, "not_started"), (attached, "attached"),
            (clientDelayed.devices, "client_delayed.devices"),
        ] {
            _ = try ReportDamage.nonNegative(value, field)
        }
        // Run and never-run devices are some of the run's; attached and delayed devices are some of the run ones.
        var scheduled = devices
        try ReportDamage.add(&scheduled, notStarted, "devices + not_started")
        try ReportDamage.partOf(scheduled, "devices + not_started", config.devices, "config.devices")
        for (value, field) in [(attached, "attached"), (clientDelayed.devices, "client_delayed.devices")] {
            try ReportDamage.partOf(value, field, devices, "devices")
        }
        _ = try ReportDamage.nonNegative(bytes, "bytes")
        _ = try ReportDamage.nonNegative(durationSeconds, "duration_seconds")
        guard durationSeconds <= Double(Self.maxTimelineSeconds) else {
            throw ReportDamage(
                "duration_seconds is \(durationSeconds), longer than the \(Self.maxTimelineSeconds) s a report can cover"
            )
        }
        _ = try ReportDamage.nonNegative(clientDelayed.maxMilliseconds, "client_delayed.max_milliseconds")
        for (counts, field) in [
            (verdicts, "verdicts"), (reasons, "reasons"), (statusCodes, "status_codes"), (notReached, "not_reached"),
            (contentExtensions ?? [:], "content_extensions"),
        ] {
            try ReportDamage.nonNegative(counts, field)
        }
        // Devices with a status code are some of the devices: the status classes are derived by
        // subtracting them, which cannot then leave Int's range.
        var answered = 0
        for (_, count) in statusCodes { try ReportDamage.add(&answered, count, "status_codes") }
        guard answered <= devices else {
            throw ReportDamage("status_codes count \(answered) devices, more than the report's \(devices)")
        }
        try client.check()
        guard timeline.count <= Self.maxTimelineSeconds else {
            throw ReportDamage("the timeline has \(timeline.count) seconds, more than \(Self.maxTimelineSeconds)")
        }
        for (index, second) in timeline.enumerated() {
            let field = "timeline[\(index)]"
            guard second.second == index else {
                throw ReportDamage("\(field) is second \(second.second): the timeline's seconds must be 0, 1, 2, ...")
            }
            for (value, name) in [
                (second.arrivals, "arrivals"), (second.completions, "completions"), (second.failures, "failures"),
                (second.inFlight, "in_flight"), (second.peakInFlight, "peak_in_flight"),
            ] {
                _ = try ReportDamage.nonNegative(value, "\(field).\(name)")
            }
            _ = try ReportDamage.nonNegative(second.bytes, field + ".bytes")
        }
        for (name, row) in networks ?? [:] { try row.check("networks.\(name)") }
        for (name, row) in audience ?? [:] { try row.check("audience.\(name)") }
        try ReportDamage.nonNegative(httpVersions ?? [:], "http_versions")
        try cache?.check()
        try urls?.check()
        try burstTimeline?.check()
        try identity?.check()
        try checkStart()
    }

    /// Computes the derived fields from the counts and histograms.
    package mutating func finalize() {
        durationSeconds = Rounding.seconds(durationSeconds)
        clientDelayed.maxMilliseconds = Rounding.milliseconds(clientDelayed.maxMilliseconds)
        displayRate = Rounding.share(devices == 0 ? 0 : Double(attached) / Double(devices))
        devicesPerSecond = Rounding.perSecond(durationSeconds > 0 ? Double(devices) / durationSeconds : 0)
        megabytesPerSecond = Rounding.perSecond(
            durationSeconds > 0 ? Double(bytes) / 1_000_000 / durationSeconds : 0)
        percentilesMilliseconds = histograms.mapValues(\.percentilesMilliseconds)
        if var rows = networks {
            for name in rows.keys { rows[name]?.finalize() }
            networks = rows
        }
        if var rows = audience {
            for name in rows.keys { rows[name]?.finalize() }
            audience = rows
        }
        var classes = ["2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0, "no_response": devices]
        for (code, count) in statusCodes {
            let number = Int(code) ?? 0
            if (100...599).contains(number) { classes["\(number / 100)xx", default: 0] += count }
            classes["no_response", default: 0] -= count
        }
        statusClasses = classes
        cache?.finalize()
        urls?.finalize()
        burstTimeline?.finalize()
        client.finalize(tooManyOpenFiles: reasons[ReasonCode.tooManyOpenFiles.rawValue] ?? 0)
        for index in timeline.indices {
            // No device started or ended in this second: the same ones were in flight all through it.
            if timeline[index].completions == 0, timeline[index].peakInFlight == 0 {
                timeline[index].peakInFlight = timeline[index].inFlight
            }
            let latency = timeline[index].latency
            timeline[index].latencyMilliseconds =
                latency.count == 0
                ? [:]
                : [
                    "p50": Rounding.milliseconds(Double(latency.value(atQuantile: 0.5)) / 1000),
                    "p90": Rounding.milliseconds(Double(latency.value(atQuantile: 0.9)) / 1000),
                    "p99": Rounding.milliseconds(Double(latency.value(atQuantile: 0.99)) / 1000),
                ]
        }
    }

    /// The profile rows in a stable order: built-in profiles as `network list` prints them, then the rest by name.
    package var networkRows: [(name: String, title: String, row: Network)] {
        let order = Dictionary(
            NetworkProfile.builtIn.enumerated().map { (NetworkAssignment.key($0.element), $0.offset) },
            uniquingKeysWith: { first, _ in first })
        return (networks ?? [:]).sorted { left, right in
            let (a, b) = (order[left.key] ?? Int.max, order[right.key] ?? Int.max)
            return a != b ? a < b : left.key < right.key
        }.map { (name: $0.key, title: NetworkProfile.named($0.key)?.title ?? $0.key, row: $0.value) }
    }

    /// The audience's rows, newest iOS first (then by linked SDK, newest first).
    package var audienceRows: [(name: String, title: String, row: Network)] {
        func version(_ key: String) -> (IOSVersion, IOSVersion) {
            let parts = key.split(separator: "@").map { IOSVersion(parsing: String($0)) ?? IOSVersion(0) }
            return (parts.first ?? IOSVersion(0), parts.count > 1 ? parts[1] : parts.first ?? IOSVersion(0))
        }
        return (audience ?? [:]).sorted { left, right in
            let (a, b) = (version(left.key), version(right.key))
            return a.0 != b.0 ? a.0 > b.0 : a.1 != b.1 ? a.1 > b.1 : left.key < right.key
        }.map { entry in
            let (ios, linked) = version(entry.key)
            let title = ios == linked ? "iOS \(ios)" : "iOS \(ios), built with the \(linked) SDK"
            return (name: entry.key, title: title, row: entry.value)
        }
    }

    private mutating func grow(to second: Int) {
        while timeline.count <= second { timeline.append(Second(second: timeline.count)) }
    }

    private static func second(of offset: Duration) -> Int { max(0, Int(offset.components.seconds)) }

    /// The report as JSON (snake_case keys, sorted).
    package func json() throws -> String { try BatchJSON.pretty(self) }

    /// Reads a report written by ``json()``.
    package static func read(_ data: Data) throws(BenchReportError) -> BenchReport {
        // Before any decoder: a file larger than any report is refused in one pass over its bytes.
        do throws(ReportDamage) { try ReportDamage.checkSize(of: [UInt8](data)) } catch {
            throw BenchReportError("not a report richpush wrote (\(error.message))")
        }
        struct Header: Decodable { var schema: String? }
        let header = try? BatchJSON.decoder.decode(Header.self, from: data)
        guard let schema = header?.schema, schema.hasPrefix("richpush.bench/") else {
            throw BenchReportError(
                "not a richpush bench report (no \"schema\": \"\(schemaName)\"); give the files a bench wrote "
                    + "as JSON (\(Setting.json))")
        }
        guard schema == schemaName else {
            throw BenchReportError(
                "written by another richpush version (\(schema)); this one reads \(schemaName): re-run that bench "
                    + "shard with this version")
        }
        let report: BenchReport
        do { report = try BatchJSON.decoder.decode(BenchReport.self, from: data) } catch {
            throw BenchReportError("a damaged \(schemaName) report (\(Self.describe(error))); write it again")
        }
        do throws(ReportDamage) {
            try ReportDamage.checkKeysAreUnique(in: [UInt8](data))
            try report.check()
        } catch {
            throw BenchReportError("a damaged \(schemaName) report (\(error.message)); write it again")
        }
        return report
    }

    /// A decoding error in a sentence: the JSON path and what was wrong there.
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "unreadable JSON" }
        func path(_ keys: [any CodingKey]) -> String {
            keys.isEmpty
                ? "the top level" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context): return "'\(key.stringValue)' missing at \(path(context.codingPath))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "unreadable JSON"
        }
    }
}

/// A report that cannot be read or merged.
package struct BenchReportError: Error, Sendable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
