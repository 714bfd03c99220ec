import CurlKit
import Digest
import Synchronization

/// What the sniffer said of each input it read, by a digest of exactly that input: the bytes libmagic
/// is shown (a download's kept head, and the bytes after an ID3v2 tag) and the media facts. The same
/// input always gives the same verdict, so a campaign's devices sniff once per distinct head, whether
/// or not anyone hashed the whole body. Bounded: when full it starts over.
///
/// Thread-safe; two threads that miss on the same input at once both sniff it (the answer is the same).
final class SniffCache: Sendable {
    /// The SHA-256 of a sniffer input (``key(of:)``).
    struct Key: Hashable, Sendable {
        fileprivate let digest: [UInt8]
    }

    private struct State {
        var entries: [Key: Sniff] = [:]
        var sniffed = 0
    }

    private let state = Mutex(State())
    /// Inputs remembered at most.
    let capacity: Int

    init(capacity: Int = 256) {
        self.capacity = max(1, capacity)
    }

    /// The sniff of the download `body` summarises: remembered, or asked of `sniffer` and remembered.
    func sniff(body: BodySummary, with sniffer: TypeSniffer) throws(SniffError) -> Sniff {
        try TypeSniffer.withInput(of: body) { input throws(SniffError) in
            guard let key = Self.key(of: input) else { return try sniffer.sniff(input) }
            if let known = sniff(of: key) { return known }
            let sniff = try sniffer.sniff(input)
            remember(sniff, of: key)
            return sniff
        }
    }

    /// The key of `input`: a digest of its bytes and facts, each with its length, so no two inputs share
    /// one; `nil` when libcrypto failed (the input is then sniffed and not remembered).
    static func key(of input: SniffInput) -> Key? {
        let facts = [
            input.head.count, input.tagEnd ?? -1, input.afterTag?.count ?? -1, input.videoHandler ? 1 : 0,
        ].map { Int64($0).littleEndian }
        var digest = SHA256Digest()
        facts.withUnsafeBytes { digest.update($0) }
        digest.update(input.head)
        if let afterTag = input.afterTag { digest.update(afterTag) }
        return digest.finalize().map(Key.init)
    }

    /// The sniff remembered for `key`, if any.
    func sniff(of key: Key) -> Sniff? {
        state.withLock { $0.entries[key] }
    }

    /// Remembers `sniff` as the verdict for `key`, counting it as one more input sniffed.
    func remember(_ sniff: Sniff, of key: Key) {
        state.withLock { state in
            state.sniffed += 1
            if state.entries.count >= capacity && state.entries[key] == nil {
                state.entries.removeAll(keepingCapacity: true)
            }
            state.entries[key] = sniff
        }
    }

    /// How many inputs are remembered.
    var count: Int { state.withLock { $0.entries.count } }

    /// How many times the sniffer ran for this cache (libmagic's work; a hit adds nothing).
    var sniffed: Int { state.withLock { $0.sniffed } }
}
