import RichPush

/// A latency histogram with a fixed log-linear bucket layout, so histograms from any run or shard
/// merge losslessly by adding counts.
///
/// Values are microseconds. Values below 2048 µs have a bucket each (exact). Above, every power of
/// two is split into 1024 equal buckets, so a bucket is at most 1/1024 of its value wide: about
/// three significant decimal digits (0.1 % relative error). Index of a value `v >= 2048`: with
/// `s = bitWidth(v) - 11` (so `v >> s` is in 1024..<2048), `2048 + (s - 1) * 1024 + (v >> s) - 1024`.
/// Percentiles report the bucket's midpoint (exact below 2048 µs). Only non-empty buckets are stored.
///
/// In JSON the buckets read as `{"le_ms": 2.047, "count": 3}`: the bucket's upper bound in
/// milliseconds (every value in it is at most that) and its count, lowest first. The bound names the
/// bucket exactly, so reports read back and merge without loss.
package struct LatencyHistogram: Sendable, Equatable, Codable {
    /// Bucket index -> count, non-empty buckets only.
    package private(set) var counts: [Int: UInt64] = [:]
    /// Number of values recorded.
    package private(set) var count: UInt64 = 0
    /// The largest value recorded (exact), in microseconds.
    package private(set) var max: UInt64 = 0
    /// The sum of values, for the mean, in microseconds.
    package private(set) var sum: UInt64 = 0
    /// The smallest value recorded (exact), in microseconds; 0 when empty.
    package private(set) var min: UInt64 = 0

    package init() {}

    static let exactLimit: UInt64 = 2048
    static let subBuckets: UInt64 = 1024

    /// The bucket of a value.
    package static func index(of value: UInt64) -> Int {
        guard value >= exactLimit else { return Int(value) }
        let shift = UInt64(64 - value.leadingZeroBitCount) - 11
        return Int(exactLimit + (shift - 1) * subBuckets + (value >> shift) - subBuckets)
    }

    /// The lowest and highest value a bucket holds.
    package static func range(of index: Int) -> ClosedRange<UInt64> {
        let index = UInt64(index)
        guard index >= exactLimit else { return index...index }
        let shift = (index - exactLimit) / subBuckets + 1
        let mantissa = (index - exactLimit) % subBuckets + subBuckets
        let low = mantissa << shift
        return low...(low + (1 << shift) - 1)
    }

    package mutating func record(microseconds value: UInt64) {
        counts[Self.index(of: value), default: 0] += 1
        min = count == 0 ? value : Swift.min(min, value)
        count += 1
        sum += value
        max = Swift.max(max, value)
    }

    package mutating func record(_ duration: Duration) {
        record(microseconds: UInt64(Swift.max(0, duration.wholeMicroseconds)))
    }

    /// Adds another histogram's counts (same layout by construction); a count or sum that would leave
    /// `UInt64`'s range (only a damaged report read back can carry one) throws and changes nothing.
    package mutating func merge(_ other: LatencyHistogram) throws(ReportDamage) {
        guard other.count > 0 else { return }
        var merged = self
        for (index, n) in other.counts {
            try ReportDamage.add(&merged.counts[index, default: 0], n, "a histogram bucket")
        }
        try ReportDamage.add(&merged.count, other.count, "count")
        try ReportDamage.add(&merged.sum, other.sum, "sum")
        merged.min = count == 0 ? other.min : Swift.min(min, other.min)
        merged.max = Swift.max(max, other.max)
        self = merged
    }

    /// The value at quantile `q` (0...1), in microseconds: the midpoint of the bucket holding it,
    /// never above the recorded maximum. 0 when empty.
    package func value(atQuantile q: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let wanted = (q * Double(count)).rounded(.up)
        let rank = wanted >= Double(UInt64.max) ? count : Swift.max(1, UInt64(Swift.max(0, wanted)))
        var seen: UInt64 = 0
        for index in counts.keys.sorted() {
            seen += counts[index] ?? 0
            if seen >= rank {
                let range = Self.range(of: index)
                return Swift.min(max, range.lowerBound + (range.upperBound - range.lowerBound) / 2)
            }
        }
        return max
    }

    /// The mean of the values recorded, in microseconds (exact); 0 when empty.
    package var mean: Double { count == 0 ? 0 : Double(sum) / Double(count) }

    /// The standard deviation of the values, in microseconds, from the bucket midpoints around the exact
    /// mean (within the buckets' 0.1 %); 0 when empty. Derived from the counts, so a merged histogram
    /// gives exactly what one run would have.
    package var standardDeviation: Double {
        guard count > 1 else { return 0 }
        let mean = self.mean
        var squares = 0.0
        for (index, n) in counts {
            let range = Self.range(of: index)
            let middle = Double(range.lowerBound) + Double(range.upperBound - range.lowerBound) / 2
            squares += Double(n) * (middle - mean) * (middle - mean)
        }
        return (squares / Double(count)).squareRoot()
    }

    /// min, mean, stdev, p50, p90, p95, p99, p99.9 and max in milliseconds (to 0.01), for reports.
    package var percentilesMilliseconds: [String: Double] {
        guard count > 0 else { return [:] }
        return [
            "min": Double(min) / 1000, "mean": mean / 1000, "stdev": standardDeviation / 1000,
            "p50": Double(value(atQuantile: 0.5)) / 1000, "p90": Double(value(atQuantile: 0.9)) / 1000,
            "p95": Double(value(atQuantile: 0.95)) / 1000, "p99": Double(value(atQuantile: 0.99)) / 1000,
            "p99_9": Double(value(atQuantile: 0.999)) / 1000, "max": Double(max) / 1000,
        ].mapValues(Rounding.milliseconds)
    }

    /// The non-empty buckets, lowest first: each bucket's upper bound in microseconds and its count.
    package var buckets: [(upperBound: UInt64, count: UInt64)] {
        counts.keys.sorted().map { (Self.range(of: $0).upperBound, counts[$0] ?? 0) }
    }

    /// One bucket in JSON: its upper bound in milliseconds and its count.
    struct Bucket: Codable {
        var leMs: Double
        var count: UInt64
    }

    /// `max`, `min` and `sum` are microseconds, as they always were; `max_us`, `min_us` and `sum_us`
    /// say so in their names and carry the same numbers (a reader may use either; the named ones win).
    enum CodingKeys: String, CodingKey {
        case buckets, count, max, min, sum
        // Camel case: BatchJSON's snake-case conversion writes and reads them as max_us, min_us, sum_us.
        case maxMicroseconds = "maxUs"
        case minMicroseconds = "minUs"
        case sumMicroseconds = "sumUs"
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        var total: UInt64 = 0
        for bucket in try container.decode([Bucket].self, forKey: .buckets) {
            let micros = bucket.leMs * 1000
            let bound = micros.rounded()
            let index = bound >= 0 && bound < 1e18 && abs(micros - bound) < 0.001 ? Self.index(of: UInt64(bound)) : -1
            guard index >= 0, Double(Self.range(of: index).upperBound) == bound, bucket.count > 0 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .buckets, in: container,
                    debugDescription: "le_ms \(bucket.leMs) is not the upper bound of a richpush histogram bucket")
            }
            let (added, bucketOverflow) = counts[index, default: 0].addingReportingOverflow(bucket.count)
            let (sum, totalOverflow) = total.addingReportingOverflow(bucket.count)
            guard !bucketOverflow && !totalOverflow else {
                throw DecodingError.dataCorruptedError(
                    forKey: .buckets, in: container, debugDescription: "the bucket counts add up past \(UInt64.max)")
            }
            counts[index] = added
            total = sum
        }
        count = try container.decode(UInt64.self, forKey: .count)
        // Either key (a report of an older version has only the unit-less one); both must agree.
        func micros(_ named: CodingKeys, _ old: CodingKeys) throws -> UInt64 {
            let value = try container.decodeIfPresent(UInt64.self, forKey: old)
            guard let unitNamed = try container.decodeIfPresent(UInt64.self, forKey: named) else {
                return try value ?? container.decode(UInt64.self, forKey: old)
            }
            guard value == nil || value == unitNamed else {
                throw DecodingError.dataCorruptedError(
                    forKey: named, in: container,
                    debugDescription: "the histogram's \(old.stringValue) and \(old.stringValue)_us do not agree")
            }
            return unitNamed
        }
        max = try micros(.maxMicroseconds, .max)
        min = try micros(.minMicroseconds, .min)
        sum = try micros(.sumMicroseconds, .sum)
        // The buckets must add up to the count, and the extremes hold the values in between: anything
        // else is a damaged or hand-made report whose percentiles would be nonsense.
        guard total == count, count == 0 ? (min == 0 && max == 0 && sum == 0) : min <= max else {
            throw DecodingError.dataCorruptedError(
                forKey: .count, in: container,
                debugDescription: "the histogram's buckets, count, min and max do not agree")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(
            buckets.map { Bucket(leMs: Double($0.upperBound) / 1000, count: $0.count) }, forKey: .buckets)
        try container.encode(count, forKey: .count)
        try container.encode(max, forKey: .max)
        try container.encode(min, forKey: .min)
        try container.encode(sum, forKey: .sum)
        try container.encode(max, forKey: .maxMicroseconds)
        try container.encode(min, forKey: .minMicroseconds)
        try container.encode(sum, forKey: .sumMicroseconds)
    }
}

extension Duration {
    /// The duration in whole microseconds, rounded down.
    package var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
