/// A latency histogram with a fixed log-linear bucket layout, so histograms from any run or shard
/// merge losslessly by adding counts.
///
/// Values are microseconds. Values below 2048 µs have a bucket each (exact). Above, every power of
/// two is split into 1024 equal buckets, so a bucket is at most 1/1024 of its value wide: about
/// three significant decimal digits (0.1 % relative error). Index of a value `v >= 2048`: with
/// `s = bitWidth(v) - 11` (so `v >> s` is in 1024..<2048), `2048 + (s - 1) * 1024 + (v >> s) - 1024`.
/// Percentiles report the bucket's midpoint (exact below 2048 µs). Only non-empty buckets are stored.
public struct LatencyHistogram: Sendable, Equatable, Codable {
    /// Bucket index -> count, non-empty buckets only.
    public private(set) var counts: [Int: UInt64] = [:]
    /// Number of values recorded.
    public private(set) var count: UInt64 = 0
    /// The largest value recorded (exact), in microseconds.
    public private(set) var max: UInt64 = 0
    /// The sum of values, for the mean, in microseconds.
    public private(set) var sum: UInt64 = 0

    public init() {}

    static let exactLimit: UInt64 = 2048
    static let subBuckets: UInt64 = 1024

    /// The bucket of a value.
    public static func index(of value: UInt64) -> Int {
        guard value >= exactLimit else { return Int(value) }
        let shift = UInt64(64 - value.leadingZeroBitCount) - 11
        return Int(exactLimit + (shift - 1) * subBuckets + (value >> shift) - subBuckets)
    }

    /// The lowest and highest value a bucket holds.
    public static func range(of index: Int) -> ClosedRange<UInt64> {
        let index = UInt64(index)
        guard index >= exactLimit else { return index...index }
        let shift = (index - exactLimit) / subBuckets + 1
        let mantissa = (index - exactLimit) % subBuckets + subBuckets
        let low = mantissa << shift
        return low...(low + (1 << shift) - 1)
    }

    public mutating func record(microseconds value: UInt64) {
        counts[Self.index(of: value), default: 0] += 1
        count += 1
        sum += value
        max = Swift.max(max, value)
    }

    public mutating func record(_ duration: Duration) {
        record(microseconds: UInt64(Swift.max(0, duration.wholeMicroseconds)))
    }

    /// Adds another histogram's counts (same layout by construction).
    public mutating func merge(_ other: LatencyHistogram) {
        for (index, n) in other.counts { counts[index, default: 0] += n }
        count += other.count
        sum += other.sum
        max = Swift.max(max, other.max)
    }

    /// The value at quantile `q` (0...1), in microseconds: the midpoint of the bucket holding it,
    /// never above the recorded maximum. 0 when empty.
    public func value(atQuantile q: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let rank = Swift.max(1, UInt64((q * Double(count)).rounded(.up)))
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

    /// p50, p90, p99, p99.9 and max in milliseconds, for reports.
    public var percentilesMilliseconds: [String: Double] {
        [
            "p50": Double(value(atQuantile: 0.5)) / 1000, "p90": Double(value(atQuantile: 0.9)) / 1000,
            "p99": Double(value(atQuantile: 0.99)) / 1000, "p99_9": Double(value(atQuantile: 0.999)) / 1000,
            "max": Double(max) / 1000,
        ]
    }

    // Codable: bucket indices as string keys, so the JSON is an object `{"2051": 3, ...}`.
    enum CodingKeys: String, CodingKey { case counts, count, max, sum }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let raw = try container.decode([String: UInt64].self, forKey: .counts)
        for (key, value) in raw {
            guard let index = Int(key), index >= 0 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .counts, in: container, debugDescription: "bucket index '\(key)' is not a number")
            }
            counts[index] = value
        }
        count = try container.decode(UInt64.self, forKey: .count)
        max = try container.decode(UInt64.self, forKey: .max)
        sum = try container.decode(UInt64.self, forKey: .sum)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(
            Dictionary(uniqueKeysWithValues: counts.map { (String($0.key), $0.value) }), forKey: .counts)
        try container.encode(count, forKey: .count)
        try container.encode(max, forKey: .max)
        try container.encode(sum, forKey: .sum)
    }
}

extension Duration {
    /// The duration in whole microseconds, rounded down.
    public var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
