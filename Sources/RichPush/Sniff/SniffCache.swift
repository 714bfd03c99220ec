import Synchronization

/// What the sniffer said of each content, by the content's SHA-256 (the whole body: the same hash
/// means the same bytes, so the same answer). Bounded: when full it starts over.
final class SniffCache: Sendable {
    private let entries = Mutex<[String: Sniff]>([:])
    /// Contents remembered at most.
    let capacity: Int

    init(capacity: Int = 256) {
        self.capacity = max(1, capacity)
    }

    /// The sniff of the content with SHA-256 `hash`, if it was remembered.
    func sniff(ofContent hash: String) -> Sniff? {
        entries.withLock { $0[hash] }
    }

    /// Remembers `sniff` as what the content with SHA-256 `hash` is.
    func remember(_ sniff: Sniff, ofContent hash: String) {
        entries.withLock { entries in
            if entries.count >= capacity && entries[hash] == nil { entries.removeAll(keepingCapacity: true) }
            entries[hash] = sniff
        }
    }

    /// How many contents are remembered.
    var count: Int { entries.withLock { $0.count } }
}
