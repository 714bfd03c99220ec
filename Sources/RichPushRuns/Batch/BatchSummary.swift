import RichPush

/// What `summary.json` holds, and the stderr table shows.
public struct BatchSummary: Sendable, Codable, Equatable {
    /// Payloads found in the input.
    public var total: Int
    /// Payloads with a record (done in this run or an earlier one).
    public var recorded: Int
    /// Payloads processed by this run.
    public var processed: Int
    /// Payloads skipped because an earlier run completed them.
    public var skipped: Int
    /// Whether the run was interrupted (rerun the same command to resume).
    public var interrupted: Bool
    public var verdicts: [String: Int]
    public var reasons: [String: Int]
    /// Payloads that asked for an attachment (or could not be read as a payload): all but `no-attachment`,
    /// and the `no-attachment` payloads that carry another SDK's media keys (``otherSDKPayloads``).
    public var requested: Int
    /// Payloads whose attachment would show.
    public var attached: Int
    /// `attached / requested` (1 when nothing was requested).
    public var displayRate: Double
    /// Download time percentiles in milliseconds (p50, p90, p99, max), over payloads that downloaded.
    public var downloadMilliseconds: [String: Double]
    public var elapsedSeconds: Double
    /// The expanded view each payload gets (`shows`, `default`, `would-crash`, `configuration-error`), when
    /// the app's content extensions are known; absent otherwise.
    public var contentExtensions: [String: Int]?
    /// Every download time, in a mergeable histogram (``LatencyHistogram``): what `report merge` adds up.
    package var downloadHistogram: LatencyHistogram?
    /// Per network profile (the run's one, or each of its mix): the campaign's table by network. Absent on loopback.
    public var networks: [String: NetworkRow]?
    /// Per phone (`DeviceVersion.key`: `17.0`, `18.0@16.0`), when the run had an audience (`--ios-mix`):
    /// each payload is judged on the phone drawn for it, as a campaign's push reaches one phone. Absent otherwise.
    public var audience: [String: NetworkRow]?
    /// The shards this summary covers (this run's shard I of N, or those `report merge` combined), and N.
    public var shards: [Int]?
    public var shardCount: Int?
    /// The gate's thresholds (those given, then the defaults; see ``Gate``), each with its measured
    /// value and PASS/FAIL; nil in summaries of older versions.
    package var thresholds: [ThresholdResult]?
    /// Whether every threshold was met: the gate's decision.
    public var passed: Bool?
    /// Which run and which shards this summary covers, for `report merge` (see ``RunIdentity``).
    package var identity: RunIdentity?
    /// Payloads the emulated SDK reads no media from although they carry another SDK's media keys
    /// (warning `other-sdk-payload`): counted as asking for an attachment that does not show, so a
    /// forgotten `--sdk` fails the gate instead of passing with nothing checked. Absent when none.
    public var otherSDKPayloads: Int?

    /// Payloads found and never recorded (an interrupted run): they count as not shown.
    public var notRun: Int { Swift.max(0, total - recorded) }

    /// Applies the gate: `thresholds` and the defaults, checked against this summary.
    package mutating func decide(_ given: [Threshold]) {
        let results = Gate.results(for: self, thresholds: given)
        thresholds = results
        passed = results.allSatisfy(\.passed)
    }

    /// One network's share of the run; the rows add up to the totals.
    public struct NetworkRow: Sendable, Codable, Equatable {
        public var payloads: Int
        public var requested: Int
        public var attached: Int
        /// Download time percentiles in milliseconds (p50, p90, p99, max), over payloads that downloaded.
        public var downloadMilliseconds: [String: Double]

        /// `attached / requested` (1 when nothing was requested).
        public var displayRate: Double { Rounding.share(requested == 0 ? 1 : Double(attached) / Double(requested)) }

        enum CodingKeys: String, CodingKey {
            case payloads, requested, attached, displayRate
            case downloadMilliseconds = "downloadMs"
        }

        public init(payloads: Int, requested: Int, attached: Int, downloadMilliseconds: [String: Double]) {
            self.payloads = payloads
            self.requested = requested
            self.attached = attached
            self.downloadMilliseconds = downloadMilliseconds
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            payloads = try container.decode(Int.self, forKey: .payloads)
            requested = try container.decode(Int.self, forKey: .requested)
            attached = try container.decode(Int.self, forKey: .attached)
            downloadMilliseconds = try container.decode([String: Double].self, forKey: .downloadMilliseconds)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(payloads, forKey: .payloads)
            try container.encode(requested, forKey: .requested)
            try container.encode(attached, forKey: .attached)
            try container.encode(displayRate, forKey: .displayRate)
            try container.encode(downloadMilliseconds, forKey: .downloadMilliseconds)
        }
    }

    /// p50, p90, p99 and max of `times` (milliseconds), nearest rank.
    static func percentiles(_ times: [Double]) -> [String: Double] {
        let sorted = times.sorted()
        func percentile(_ p: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))]
        }
        return [
            "p50": percentile(0.5), "p90": percentile(0.9), "p99": percentile(0.99), "max": sorted.last ?? 0,
        ].mapValues(Rounding.milliseconds)
    }

    /// Written and read with ``BatchJSON``'s snake_case conversion (as the histograms inside are):
    /// `downloadMs` is `download_ms` in the file.
    enum CodingKeys: String, CodingKey {
        case total, recorded, processed, skipped, interrupted, verdicts, reasons, requested, attached
        case displayRate, elapsedSeconds, contentExtensions, downloadHistogram, networks, audience, shards, shardCount
        case thresholds, passed, identity
        case downloadMilliseconds = "downloadMs"
        case otherSDKPayloads = "otherSdkPayloads"
    }

    /// Adds another shard's summary: counts and histograms add up; rates and percentiles are recomputed
    /// (download percentiles from the merged histogram, so to its bucket precision). Every count is
    /// added with a check; on any error this summary is left as it was.
    package mutating func merge(_ other: BatchSummary) throws(ReportDamage) {
        var merged = self
        try merged.add(other)
        self = merged
    }

    private mutating func add(_ other: BatchSummary) throws(ReportDamage) {
        try ReportDamage.add(&total, other.total, "total")
        try ReportDamage.add(&recorded, other.recorded, "recorded")
        try ReportDamage.add(&processed, other.processed, "processed")
        try ReportDamage.add(&skipped, other.skipped, "skipped")
        interrupted = interrupted || other.interrupted
        try ReportDamage.add(&verdicts, other.verdicts, "verdicts")
        try ReportDamage.add(&reasons, other.reasons, "reasons")
        try ReportDamage.add(&requested, other.requested, "requested")
        try ReportDamage.add(&attached, other.attached, "attached")
        if self.otherSDKPayloads != nil || other.otherSDKPayloads != nil {
            var count = self.otherSDKPayloads ?? 0
            try ReportDamage.add(&count, other.otherSDKPayloads ?? 0, "other_sdk_payloads")
            otherSDKPayloads = count
        }
        displayRate = Rounding.share(requested == 0 ? 1 : Double(attached) / Double(requested))
        elapsedSeconds = Swift.max(elapsedSeconds, other.elapsedSeconds)
        if let theirs = other.contentExtensions {
            var mine = contentExtensions ?? [:]
            try ReportDamage.add(&mine, theirs, "content_extensions")
            contentExtensions = mine
        }
        if let theirs = other.downloadHistogram {
            var merged = downloadHistogram ?? LatencyHistogram()
            try merged.merge(theirs)
            downloadHistogram = merged
            let p = merged.percentilesMilliseconds
            downloadMilliseconds = [
                "p50": p["p50"] ?? 0, "p90": p["p90"] ?? 0, "p99": p["p99"] ?? 0, "max": p["max"] ?? 0,
            ]
        }
        if let theirs = other.networks { networks = try Self.merging(networks, theirs, "networks") }
        if let theirs = other.audience { audience = try Self.merging(audience, theirs, "audience") }
        shards = ((shards ?? [1]) + (other.shards ?? [1])).sorted()
        shardCount = shardCount ?? other.shardCount
        if var mine = identity, let theirs = other.identity {
            mine.runs = (mine.runs + theirs.runs).sorted { $0.shard < $1.shard }
            identity = mine
        } else {
            identity = nil
        }
        // The thresholds apply to the whole: the merge decides them again.
        thresholds = nil
        passed = nil
    }

    /// `mine` with `theirs` added row by row (networks or phones): counts add up; per-row percentiles
    /// are not mergeable, so a merged row keeps the counts only.
    private static func merging(_ mine: [String: NetworkRow]?, _ theirs: [String: NetworkRow], _ field: String)
        throws(ReportDamage) -> [String: NetworkRow]
    {
        var rows = mine ?? [:]
        for (name, row) in theirs {
            guard var kept = rows[name] else {
                rows[name] = row
                continue
            }
            try ReportDamage.add(&kept.payloads, row.payloads, "\(field).\(name).payloads")
            try ReportDamage.add(&kept.requested, row.requested, "\(field).\(name).requested")
            try ReportDamage.add(&kept.attached, row.attached, "\(field).\(name).attached")
            kept.downloadMilliseconds = [:]
            rows[name] = kept
        }
        return rows
    }

    /// Throws when a number in a summary read back from a file cannot be right: a negative count, an
    /// elapsed time that is not a finite positive number, a shard outside `1...shard_count`.
    package func check() throws(ReportDamage) {
        for (value, field) in [
            (total, "total"), (recorded, "recorded"), (processed, "processed"), (skipped, "skipped"),
            (requested, "requested"), (attached, "attached"),
        ] {
            _ = try ReportDamage.nonNegative(value, field)
        }
        _ = try ReportDamage.nonNegative(elapsedSeconds, "elapsed_seconds")
        try ReportDamage.nonNegative(verdicts, "verdicts")
        try ReportDamage.nonNegative(reasons, "reasons")
        try ReportDamage.nonNegative(contentExtensions ?? [:], "content_extensions")
        for (field, rows) in [("networks", networks), ("audience", audience)] {
            for (name, row) in rows ?? [:] {
                _ = try ReportDamage.nonNegative(row.payloads, "\(field).\(name).payloads")
                _ = try ReportDamage.nonNegative(row.requested, "\(field).\(name).requested")
                _ = try ReportDamage.nonNegative(row.attached, "\(field).\(name).attached")
            }
        }
        try identity?.check()
        if let shardCount {
            guard (1...BenchReport.maxShards).contains(shardCount),
                (shards ?? []).allSatisfy({ (1...shardCount).contains($0) })
            else {
                throw ReportDamage("shards \(shards ?? []) do not fit shard_count \(shardCount)")
            }
        }
    }
}
