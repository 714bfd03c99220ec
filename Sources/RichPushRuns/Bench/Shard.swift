import RichPush

/// One of N equal slices of a run (shard I of N): every N-th device or payload, starting at the I-th.
///
/// ```swift
/// let shard = try Shard(parsing: "2/4")   // index 2, count 4
/// ```
package struct Shard: Sendable, Equatable {
    /// The slice, from 1 to ``count``.
    package var index: Int
    /// The number of slices.
    package var count: Int

    /// The whole run, as one slice.
    package static let whole = Shard(index: 1, count: 1)

    package init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// Reads `I/N` with 1 <= I <= N.
    package init(parsing text: String) throws(ConfigurationError) {
        let parts = text.split(separator: "/").map { Int($0) }
        guard parts.count == 2, let index = parts[0], let count = parts[1], count >= 1, (1...count).contains(index)
        else {
            throw .invalid(.shard, "takes I/N with 1 <= I <= N, for example 2/4")
        }
        self.init(index: index, count: count)
    }

    /// Whether the element at `position` (from 0) of the whole run belongs to this slice.
    package func contains(position: Int) -> Bool { position % count == index - 1 }
}
