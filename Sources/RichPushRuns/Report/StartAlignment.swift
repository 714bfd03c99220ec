import RichPush

/// What `report merge` says about when the shards began: whether their timelines count from one
/// moment, and whether the burst they were to send together was spread out.
///
/// With one shared start (`--start-at`) every shard's timeline already counts from that moment (the
/// runner offsets each device by the shard's lateness), so the merge adds the buckets up as they
/// are, and any series the timeline gains lines up the same way. What can still go wrong is warned
/// about here:
///
/// - shards that began more than ``spreadLimit`` apart: the host saw the burst spread by that much
///   (the merged timeline shows it as it happened);
/// - shards given different start times, or some none: their timelines count from different moments;
/// - without any shared start, shards that began more than ``spreadLimit`` apart: each timeline counts
///   from its own shard's start, so the merged one shows a burst the host never saw;
/// - a clock the kernel says is not synchronized: its lateness may be off by more than it shows.
///
/// ```swift
/// var alignment = StartAlignment()
/// alignment.admit(file: "a.json", start: a.start)
/// alignment.admit(file: "b.json", start: b.start)
/// let warnings = alignment.warnings
/// ```
package struct StartAlignment: Sendable {
    /// Shards that began further apart than this are warned about: one bucket of a burst's fine
    /// timeline (100 ms), and far above what clocks synchronized by NTP in one network disagree by (a
    /// few milliseconds).
    package static let spreadLimit: Duration = .milliseconds(100)

    private var inputs: [(file: String, start: BenchReport.Start?, durationSeconds: Double)] = []

    package init() {}

    /// Notes one input's start record (nil: a report of an older version, which records none) and its
    /// own wall time.
    package mutating func admit(file: String, start: BenchReport.Start?, durationSeconds: Double = 0) {
        inputs.append((file, start, durationSeconds))
    }

    /// The merged run's wall time when every input counts from one shared start: from that start to
    /// the end of the shard that ended last (its lateness plus its own duration); nil otherwise, when
    /// the longest shard's duration stands.
    package var sharedDurationSeconds: Double? {
        guard let at = inputs.first?.start?.at, inputs.allSatisfy({ $0.start?.at == at }) else { return nil }
        return inputs.map { input in
            let lateness = input.start?.shards.compactMap(\.latenessMilliseconds).max() ?? 0
            return max(0, lateness) / 1000 + input.durationSeconds
        }.max()
    }

    /// The warnings, in a stable order.
    package var warnings: [String] {
        let recorded = inputs.compactMap { input in input.start.map { (file: input.file, start: $0) } }
        guard !recorded.isEmpty else { return [] }
        var warnings: [String] = []
        let unrecorded = inputs.filter { $0.start == nil }.map(\.file)
        if !unrecorded.isEmpty {
            warnings.append(
                "\(Self.list(unrecorded)) record\(unrecorded.count == 1 ? "s" : "") no start time (an older richpush "
                    + "version): whether the shards started together cannot be checked")
        }
        let shared = Set(recorded.map { $0.start.at ?? "" })
        let shards = recorded.flatMap(\.start.shards)
        if shared.count > 1 {
            let named = recorded.map { "\($0.file) \($0.start.at.map { "at \($0)" } ?? "without --start-at")" }
            warnings.append(
                "the shards were not given one --start-at (\(named.joined(separator: ", "))): their timelines "
                    + "count from different moments, so the merged timeline is not the burst the host saw. "
                    + "Run every shard with the same --start-at")
        } else if let at = shared.first, !at.isEmpty {
            let lateness = shards.compactMap { shard in shard.latenessMilliseconds.map { (shard.shard, $0) } }
            if let low = lateness.min(by: { $0.1 < $1.1 }), let high = lateness.max(by: { $0.1 < $1.1 }),
                high.1 - low.1 > Self.spreadLimit.inMilliseconds
            {
                warnings.append(
                    String(
                        format: "the shards began %.1f ms apart against --start-at %@ (shard %d %.1f ms late, shard "
                            + "%d %.1f ms): the host saw the burst spread by that much; the merged timeline "
                            + "counts from the shared start and shows it as it happened. Give the pods more time "
                            + "before the start",
                        high.1 - low.1, at, high.0, high.1, low.0, low.1))
            }
        } else {
            let began = shards.map { ($0.shard, $0.beganEpochSeconds) }
            if let first = began.min(by: { $0.1 < $1.1 }), let last = began.max(by: { $0.1 < $1.1 }),
                (last.1 - first.1) * 1000 > Self.spreadLimit.inMilliseconds
            {
                warnings.append(
                    String(
                        format: "the shards began %.1f s apart (shard %d first, shard %d last) without --start-at: "
                            + "each timeline counts from its own shard's start, so the merged timeline shows one "
                            + "burst the host did not see. Give every shard the same --start-at",
                        last.1 - first.1, first.0, last.0))
            }
        }
        let unsynchronized = shards.filter { $0.clockSynchronized == false }.map(\.shard)
        if !unsynchronized.isEmpty, shared.count == 1, shared.first != "" {
            let one = unsynchronized.count == 1
            warnings.append(
                "the clock\(one ? "" : "s") of shard\(one ? "" : "s") "
                    + "\(unsynchronized.map(String.init).joined(separator: ", ")) \(one ? "was" : "were") not "
                    + "synchronized (the kernel's NTP state): \(one ? "its start" : "their starts") may be off by more "
                    + "than \(one ? "its" : "their") lateness shows")
        }
        return warnings
    }

    private static func list(_ files: [String]) -> String {
        files.count > 3
            ? files.prefix(3).joined(separator: ", ") + " and \(files.count - 3) more"
            : files.joined(
                separator: ", ")
    }
}
