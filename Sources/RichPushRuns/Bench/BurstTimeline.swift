import RichPush

/// A bench's timeline at the resolution its length calls for: 10 ms buckets for a burst of a second,
/// 100 ms for a few seconds, a second for minutes.
///
/// Buckets start at ``widths``' first (10 ms) and, whenever the run outlasts ``maxBuckets`` of them,
/// the timeline doubles up into the next width (each width divides the next, so the counts add up
/// exactly), so the bucket is chosen by the run's length as it goes, at O(1) amortised per device.
/// Each bucket counts arrivals, starts, completions (and failures among them), new connections,
/// bytes (counted when the device finishes), cache hits and misses, and the most devices in flight at
/// once; ``finalize()`` derives the devices in flight during the bucket and the rates per second.
/// Timelines of shards merge exactly: the finer one is coarsened to the other's width first.
package struct BurstTimeline: Sendable, Codable, Equatable {
    package struct Bucket: Sendable, Codable, Equatable {
        package var arrivals = 0
        package var starts = 0
        package var completions = 0
        package var failures = 0
        package var newConnections = 0
        package var bytes: Int64 = 0
        package var hits = 0
        package var misses = 0
        /// The most devices in flight at once during the bucket (summed over shards after a merge).
        package var peakInFlight = 0
        /// Derived: devices in flight at some moment of the bucket (started by its end, not ended before it).
        package var inFlight = 0
        /// Derived: `bytes` and `new_connections` per second of the bucket.
        package var bytesPerSecond = 0.0
        package var newConnectionsPerSecond = 0.0

        package init() {}

        mutating func add(_ other: Bucket, _ field: String) throws(ReportDamage) {
            try ReportDamage.add(&arrivals, other.arrivals, field + ".arrivals")
            try ReportDamage.add(&starts, other.starts, field + ".starts")
            try ReportDamage.add(&completions, other.completions, field + ".completions")
            try ReportDamage.add(&failures, other.failures, field + ".failures")
            try ReportDamage.add(&newConnections, other.newConnections, field + ".new_connections")
            try ReportDamage.add(&bytes, other.bytes, field + ".bytes")
            try ReportDamage.add(&hits, other.hits, field + ".hits")
            try ReportDamage.add(&misses, other.misses, field + ".misses")
        }

        /// Adds a neighbour of the same run (coarsening): counts add, the peak is the larger.
        mutating func absorb(_ other: Bucket) throws(ReportDamage) {
            try add(other, "burst_timeline")
            peakInFlight = Swift.max(peakInFlight, other.peakInFlight)
        }
    }

    /// The bucket widths in milliseconds, each a whole multiple of the one before.
    package static let widths = [10, 20, 100, 200, 1000, 2000, 10_000, 60_000, 300_000, 600_000, 3_600_000]
    /// The most buckets before the width grows (at the last width, a week fits in 168).
    package static let maxBuckets = 150

    package var bucketMilliseconds = BurstTimeline.widths[0]
    package var buckets: [Bucket] = []
    /// Derived: the highest ``Bucket/bytesPerSecond``, ``Bucket/newConnectionsPerSecond`` and ``Bucket/inFlight``.
    package var peakBytesPerSecond = 0.0
    package var peakNewConnectionsPerSecond = 0.0
    package var peakInFlight = 0

    package init() {}

    mutating func add(_ device: DeviceResult) {
        let arrival = bucket(at: device.scheduled)
        buckets[arrival].arrivals += 1
        let start = bucket(at: device.started)
        buckets[start].starts += 1
        buckets[start].newConnections += device.connectionsMade
        let end = bucket(at: device.ended)
        buckets[end].completions += 1
        buckets[end].bytes += device.bytes
        if device.verdict != .attached { buckets[end].failures += 1 }
        if device.cache == .hit { buckets[end].hits += 1 }
        if device.cache == .miss { buckets[end].misses += 1 }
    }

    mutating func notePeakInFlight(_ count: Int, at offset: Duration) {
        let index = bucket(at: offset)
        buckets[index].peakInFlight = Swift.max(buckets[index].peakInFlight, count)
    }

    /// The bucket `offset` falls in, the timeline grown (and coarsened) to hold it.
    private mutating func bucket(at offset: Duration) -> Int {
        let milliseconds = Swift.max(
            0, Int(offset.components.seconds) * 1000 + Int(offset.components.attoseconds / 1_000_000_000_000_000))
        var index = milliseconds / bucketMilliseconds
        while index >= Self.maxBuckets, let next = Self.widths.first(where: { $0 > bucketMilliseconds }) {
            // Counts of one run's devices cannot overflow where each device's own did not.
            try? coarsen(to: next)
            index = milliseconds / bucketMilliseconds
        }
        while buckets.count <= index { buckets.append(Bucket()) }
        return index
    }

    /// Regroups the buckets into `width` (a multiple of the current width).
    /// Throws, changing nothing, when counts read back from a damaged report add up past Int's range.
    private mutating func coarsen(to width: Int) throws(ReportDamage) {
        let factor = max(1, width / bucketMilliseconds)
        var grouped: [Bucket] = []
        grouped.reserveCapacity(buckets.count / factor + 1)
        for (index, bucket) in buckets.enumerated() {
            if index % factor == 0 {
                grouped.append(bucket)
            } else {
                try grouped[grouped.count - 1].absorb(bucket)
            }
        }
        buckets = grouped
        bucketMilliseconds = width
    }

    /// Adds another shard's timeline: both at the coarser width, then bucket by bucket (peaks add:
    /// the shards ran at once).
    mutating func merge(_ other: BurstTimeline) throws(ReportDamage) {
        var theirs = other
        if theirs.bucketMilliseconds < bucketMilliseconds { try theirs.coarsen(to: bucketMilliseconds) }
        if bucketMilliseconds < theirs.bucketMilliseconds { try coarsen(to: theirs.bucketMilliseconds) }
        while buckets.count < theirs.buckets.count { buckets.append(Bucket()) }
        for (index, bucket) in theirs.buckets.enumerated() {
            try buckets[index].add(bucket, "burst_timeline.buckets[\(index)]")
            try ReportDamage.add(
                &buckets[index].peakInFlight, bucket.peakInFlight, "burst_timeline.buckets[\(index)].peak_in_flight")
        }
        while buckets.count > Self.maxBuckets, let next = Self.widths.first(where: { $0 > bucketMilliseconds }) {
            try coarsen(to: next)
        }
    }

    /// The most buckets a report read back may carry (a week at the last width, with room).
    static let maxStoredBuckets = 1000

    func check() throws(ReportDamage) {
        guard Self.widths.contains(bucketMilliseconds) else {
            throw ReportDamage("burst_timeline.bucket_milliseconds is \(bucketMilliseconds), not one of \(Self.widths)")
        }
        guard buckets.count <= Self.maxStoredBuckets else {
            throw ReportDamage("burst_timeline has \(buckets.count) buckets, more than \(Self.maxStoredBuckets)")
        }
        for (index, bucket) in buckets.enumerated() {
            let field = "burst_timeline.buckets[\(index)]"
            for (value, name) in [
                (bucket.arrivals, "arrivals"), (bucket.starts, "starts"), (bucket.completions, "completions"),
                (bucket.failures, "failures"), (bucket.newConnections, "new_connections"), (bucket.hits, "hits"),
                (bucket.misses, "misses"), (bucket.peakInFlight, "peak_in_flight"),
            ] {
                _ = try ReportDamage.nonNegative(value, "\(field).\(name)")
            }
            _ = try ReportDamage.nonNegative(bucket.bytes, field + ".bytes")
        }
    }

    mutating func finalize() {
        let seconds = Double(bucketMilliseconds) / 1000
        var running = 0
        peakBytesPerSecond = 0
        peakNewConnectionsPerSecond = 0
        peakInFlight = 0
        for index in buckets.indices {
            let (sum, overflow) = running.addingReportingOverflow(buckets[index].starts)
            buckets[index].inFlight = overflow ? Int.max : Swift.max(0, sum)
            running = overflow ? Int.max : sum - buckets[index].completions
            buckets[index].bytesPerSecond = Rounding.perSecond(Double(buckets[index].bytes) / seconds)
            buckets[index].newConnectionsPerSecond = Rounding.perSecond(Double(buckets[index].newConnections) / seconds)
            peakBytesPerSecond = Swift.max(peakBytesPerSecond, buckets[index].bytesPerSecond)
            peakNewConnectionsPerSecond = Swift.max(peakNewConnectionsPerSecond, buckets[index].newConnectionsPerSecond)
            peakInFlight = Swift.max(peakInFlight, buckets[index].peakInFlight)
        }
    }
}
