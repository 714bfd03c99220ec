import Digest
import RichPush

/// Which campaign and which shards a bench report or a batch summary covers, so `report merge` can
/// tell shards of one campaign from duplicates and from other campaigns.
///
/// Shards of one campaign run as separate processes, often on separate machines, so each has its own
/// random ``Run/id``. What makes them one campaign is the same ``optionsDigest`` (a digest of the
/// options that decide verdicts and of the target or schedule, not of paths or local port mappings)
/// and the same ``shardCount``. A merge therefore refuses:
///
/// - a duplicate: the same shard index twice (the same file given twice, or the same shard run twice);
/// - a foreign run: another options digest or another shard count;
/// - overlapping shards: a merged report and another report that share a shard.
///
/// It warns about missing shards (or refuses them when every shard is required). Reports of older
/// versions carry no identity: they merge with a warning that their options could not be compared,
/// still checked for duplicate and overlapping shards.
package struct RunIdentity: Sendable, Codable, Equatable {
    /// One shard's run: its random id (a batch keeps it across resumes) and its shard index.
    package struct Run: Sendable, Codable, Equatable {
        package var id: String
        package var shard: Int

        package init(id: String, shard: Int) {
            self.id = id
            self.shard = shard
        }
    }

    /// A digest (16 hex digits of SHA-256) of the options that decide verdicts.
    package var optionsDigest: String
    /// The number of shards of the campaign.
    package var shardCount: Int
    /// The runs this report covers: one, or every merged shard's, by shard.
    package var runs: [Run]

    package init(runID: String, shard: Int, shardCount: Int, optionsDigest: String) {
        self.optionsDigest = optionsDigest
        self.shardCount = shardCount
        runs = [Run(id: runID, shard: shard)]
    }

    /// A new random run id: 16 hex digits.
    package static func newRunID() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The digest of `options` (name -> value), independent of their order.
    package static func digest(of options: [String: String]) -> String {
        let text = options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)\n" }.joined()
        return SHA256Digest.hex(of: Array(text.utf8)).map { String($0.prefix(16)) } ?? "unknown"
    }

    /// The longest run id or digest read back: far above the 16 digits written.
    static let maxTextLength = 128

    /// Throws when an identity read from a file cannot be one: ids or digests too long, shards outside
    /// `1...shardCount`, a shard listed twice.
    func check() throws(ReportDamage) {
        guard (1...BenchReport.maxShards).contains(shardCount) else {
            throw ReportDamage("identity.shard_count \(shardCount) is not 1 to \(BenchReport.maxShards)")
        }
        guard optionsDigest.utf8.count <= Self.maxTextLength,
            runs.allSatisfy({ $0.id.utf8.count <= Self.maxTextLength })
        else { throw ReportDamage("identity: a run id or digest longer than \(Self.maxTextLength) characters") }
        guard runs.count <= shardCount, runs.allSatisfy({ (1...shardCount).contains($0.shard) }),
            Set(runs.map(\.shard)).count == runs.count
        else {
            throw ReportDamage("identity.runs \(runs.map(\.shard)) do not fit shard_count \(shardCount)")
        }
    }
}

/// A report `report merge` will not combine with the others: a duplicate, a foreign run, overlapping
/// shards or (when every shard is required) a missing one.
package struct MergeRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// The identity checks of one merge, fed the inputs one at a time.
///
/// ```swift
/// var check = MergeCheck()
/// try check.admit(file: "a.json", identity: a.identity, shards: a.shards, shardCount: 2)
/// try check.admit(file: "b.json", identity: b.identity, shards: b.shards, shardCount: 2)
/// let warnings = try check.finish(requireAllShards: false)
/// ```
package struct MergeCheck: Sendable {
    private var first: (file: String, identity: RunIdentity?, shardCount: Int)?
    /// Shard -> the file that brought it, and its run id (nil without an identity).
    private var seen: [Int: (file: String, run: String?)] = [:]
    /// Warnings so far, in order.
    package private(set) var warnings: [String] = []

    package init() {}

    /// Checks one input against those admitted before it.
    package mutating func admit(file: String, identity: RunIdentity?, shards: [Int], shardCount: Int)
        throws(MergeRefusal)
    {
        if identity == nil {
            warnings.append(
                "\(file) was written by an older richpush version without a run identity: its options cannot be "
                    + "compared with the others' (only its shards are checked); re-run that shard to check it")
        }
        if let first {
            guard shardCount == first.shardCount else {
                throw MergeRefusal(
                    "\(file) is shard \(shards) of \(shardCount), but \(first.file) is of \(first.shardCount): "
                        + "they are not shards of one run. Give the shards of one campaign only")
            }
            if let mine = identity?.optionsDigest, let theirs = first.identity?.optionsDigest, mine != theirs {
                throw MergeRefusal(
                    "\(file) comes from another run than \(first.file): the options that decide verdicts differ "
                        + "(digest \(mine), not \(theirs)). Give the shards of one campaign only")
            }
        } else {
            first = (file, identity, shardCount)
        }
        let runs = Dictionary(
            (identity?.runs ?? []).map { ($0.shard, $0.id) }, uniquingKeysWith: { first, _ in first })
        for shard in shards {
            if let earlier = seen[shard] {
                let run = runs[shard]
                if earlier.run != nil && earlier.run == run {
                    throw MergeRefusal(
                        "\(file) repeats shard \(shard) of \(earlier.file) (the same run): each shard's report "
                            + "is merged once")
                }
                if shards.count > 1 || earlier.file != file && seenShards(of: earlier.file) > 1 {
                    throw MergeRefusal(
                        "\(file) overlaps \(earlier.file): both cover shard \(shard). Merge each shard's own "
                            + "report once")
                }
                throw MergeRefusal(
                    "\(file) is shard \(shard) of \(shardCount) again (\(earlier.file) is too): a shard run twice "
                        + "would count its devices twice. Keep one of them")
            }
        }
        for shard in shards { seen[shard] = (file, runs[shard]) }
    }

    private func seenShards(of file: String) -> Int { seen.values.filter { $0.file == file }.count }

    /// The shards of the campaign no input covered, as a warning (or a refusal when `requireAllShards`);
    /// returns every warning.
    package mutating func finish(requireAllShards: Bool) throws(MergeRefusal) -> [String] {
        guard let count = first?.shardCount else { return warnings }
        let missing = (1...count).filter { seen[$0] == nil }
        guard !missing.isEmpty else { return warnings }
        let list =
            missing.count > 10
            ? "\(missing.prefix(10).map(String.init).joined(separator: ", ")), ..."
            : missing.map(String.init).joined(separator: ", ")
        let text =
            "shard\(missing.count == 1 ? "" : "s") \(list) of \(count) \(missing.count == 1 ? "is" : "are") missing"
        if requireAllShards {
            throw MergeRefusal(text + ": every shard is required. Give every shard's report")
        }
        warnings.append(text + ": the merged report covers only the others")
        return warnings
    }
}
