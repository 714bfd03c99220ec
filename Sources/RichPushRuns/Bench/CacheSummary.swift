import RichPush

/// What the caches in front of the origin did for a bench's devices: how many answered from cache,
/// and the end-to-end latency of hits and of misses apart (see ``CacheResult`` for the headers read).
///
/// ```swift
/// var cache = CacheSummary()
/// cache.add(device)
/// cache.finalize()
/// cache.hitRatio   // hits / (hits + misses)
/// ```
package struct CacheSummary: Sendable, Codable, Equatable {
    /// `hit`, `miss`, `bypass`, `none` -> devices.
    package var results: [String: Int] = [:]
    /// End-to-end latency of the devices whose response was a hit, and a miss.
    package var hitLatency = LatencyHistogram()
    package var missLatency = LatencyHistogram()
    /// Derived: hits / (hits + misses), 0 when neither; bypasses and responses without cache headers
    /// are left out.
    package var hitRatio = 0.0
    /// Derived: the statistics of ``hitLatency`` and ``missLatency`` in milliseconds (the keys of
    /// `percentiles_milliseconds`).
    package var hitLatencyMilliseconds: [String: Double] = [:]
    package var missLatencyMilliseconds: [String: Double] = [:]

    package init() {}

    package var hits: Int { results[CacheResult.hit.rawValue] ?? 0 }
    package var misses: Int { results[CacheResult.miss.rawValue] ?? 0 }

    /// Whether any response carried a cache header.
    package var sawCache: Bool { results.contains { $0.key != CacheResult.none.rawValue && $0.value > 0 } }

    mutating func add(_ device: DeviceResult) {
        results[device.cache.rawValue, default: 0] += 1
        switch device.cache {
        case .hit: hitLatency.record(device.ended - device.scheduled)
        case .miss: missLatency.record(device.ended - device.scheduled)
        case .bypass, .none: break
        }
    }

    mutating func merge(_ other: CacheSummary) throws(ReportDamage) {
        try ReportDamage.add(&results, other.results, "cache.results")
        try hitLatency.merge(other.hitLatency)
        try missLatency.merge(other.missLatency)
    }

    func check() throws(ReportDamage) {
        try ReportDamage.nonNegative(results, "cache.results")
    }

    mutating func finalize() {
        // In Double: a damaged report read back may hold counts whose sum leaves Int's range.
        let answered = Double(hits) + Double(misses)
        hitRatio = Rounding.share(answered == 0 ? 0 : Double(hits) / answered)
        hitLatencyMilliseconds = hitLatency.percentilesMilliseconds
        missLatencyMilliseconds = missLatency.percentilesMilliseconds
    }
}
