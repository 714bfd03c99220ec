import RichPush

/// When each shard of a bench began, on whose clock, and against which shared start: what
/// `report merge` aligns shards on and warns about.
extension BenchReport {
    /// The run's start: the shared start (`--start-at`) when one was given, and every shard's own.
    package struct Start: Sendable, Codable, Equatable {
        /// The shared start in RFC 3339 (UTC, milliseconds), or nil when each shard started on its own.
        /// With it, the report's offsets and timeline count from this moment; without, from the shard's
        /// own start.
        package var at: String?
        /// Each shard's start, by shard.
        package var shards: [ShardStart]

        package init(at: String?, shards: [ShardStart]) {
            self.at = at
            self.shards = shards
        }
    }

    /// One shard's start: the wall clock as its schedule began, its lateness against the shared start,
    /// and the clock's accuracy as the kernel reported it.
    package struct ShardStart: Sendable, Codable, Equatable {
        package var shard: Int
        /// The wall clock as the schedule began, in RFC 3339 and in seconds since the epoch.
        package var began: String
        package var beganEpochSeconds: Double
        /// `began - at` (nil without a shared start): how late this shard started its schedule.
        package var latenessMilliseconds: Double?
        /// The clock `began` was read on: `CLOCK_REALTIME`.
        package var clock: String
        /// Whether the kernel's NTP state said that clock was synchronized (nil: unknown).
        package var clockSynchronized: Bool?
        /// The kernel's maximum error of that clock, in milliseconds (nil: unknown).
        package var clockMaxErrorMilliseconds: Double?

        /// The start of `shard` read from `reading`, late by `began - at` when there is a shared start.
        package init(shard: Int, reading: WallClock.Reading, sharedStart: WallTime?) {
            self.shard = shard
            began = reading.time.rfc3339
            beganEpochSeconds = reading.time.epochSeconds
            latenessMilliseconds = sharedStart.map { Rounding.milliseconds((reading.time - $0).inMilliseconds) }
            clock = WallClock.name
            clockSynchronized = reading.synchronized
            clockMaxErrorMilliseconds = reading.maxError.map { Rounding.milliseconds($0.inMilliseconds) }
        }
    }

    /// The longest text a start record may carry when read back: far above the 24 characters written.
    static let maxStartTextLength = 64

    /// The start records of two reports merged: every shard's, and the shared start when both name the
    /// same one (nil otherwise: `report merge` warns that their timelines count from different moments).
    static func merged(_ mine: Start?, _ theirs: Start?) -> Start? {
        guard let mine, let theirs else { return mine ?? theirs }
        return Start(
            at: mine.at == theirs.at ? mine.at : nil,
            shards: (mine.shards + theirs.shards).sorted { $0.shard < $1.shard })
    }

    /// Text lines for the summary: the shared start and how late the shards began, on which clock.
    var startLines: [String] {
        guard let start, let at = start.at, !start.shards.isEmpty else { return [] }
        let lateness = start.shards.compactMap(\.latenessMilliseconds)
        let clocks = Set(start.shards.map(\.clock)).sorted().joined(separator: ", ")
        let unsynchronized = start.shards.filter { $0.clockSynchronized == false }.map(\.shard)
        let maxError = start.shards.compactMap(\.clockMaxErrorMilliseconds).max()
        let clockText =
            "\(clocks)"
            + (unsynchronized.isEmpty
                ? (start.shards.allSatisfy { $0.clockSynchronized == true } ? ", synchronized" : "")
                : ", not synchronized on shard\(unsynchronized.count == 1 ? "" : "s") "
                    + unsynchronized.map(String.init).joined(separator: ", "))
            + (maxError.map { String(format: ", max error %.1f ms", $0) } ?? "")
        guard let low = lateness.min(), let high = lateness.max() else { return [] }
        if start.shards.count == 1 {
            return [String(format: "Start: --start-at %@; began %.1f ms late (%@).", at, high, clockText)]
        }
        return [
            String(
                format: "Start: --start-at %@; %d shards began %.1f to %.1f ms late (spread %.1f ms; %@).", at,
                start.shards.count, low, high, high - low, clockText)
        ]
    }

    /// Throws when a start record read back from a file cannot be one: texts too long, times that are
    /// not RFC 3339, numbers not finite, shards outside `1...shard_count` or listed twice.
    func checkStart() throws(ReportDamage) {
        guard let start else { return }
        guard start.shards.count <= config.shardCount, Set(start.shards.map(\.shard)).count == start.shards.count,
            start.shards.allSatisfy({ (1...config.shardCount).contains($0.shard) })
        else {
            throw ReportDamage("start.shards \(start.shards.map(\.shard)) do not fit shard_count \(config.shardCount)")
        }
        let texts = [start.at ?? ""] + start.shards.flatMap { [$0.began, $0.clock] }
        guard texts.allSatisfy({ $0.utf8.count <= Self.maxStartTextLength }) else {
            throw ReportDamage("start: a time or clock name longer than \(Self.maxStartTextLength) characters")
        }
        for text in [start.at].compactMap({ $0 }) + start.shards.map(\.began) {
            guard (try? WallTime(parsing: text)) != nil else {
                throw ReportDamage("start: '\(text.escapingControlCharacters)' is not a time (RFC 3339)")
            }
        }
        for shard in start.shards {
            let numbers = [
                shard.beganEpochSeconds, shard.latenessMilliseconds ?? 0, shard.clockMaxErrorMilliseconds ?? 0,
            ]
            guard numbers.allSatisfy(\.isFinite) else {
                throw ReportDamage("start.shards[\(shard.shard)]: a number that is not finite")
            }
        }
    }
}
