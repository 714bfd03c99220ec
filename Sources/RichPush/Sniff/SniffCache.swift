import CurlKit
import Glibc
import Synchronization

/// What the sniffer said of each input it read, by exactly that input: the bytes libmagic is shown (a
/// download's kept head, and the bytes after an ID3v2 tag) and the media facts. The same input always
/// gives the same verdict, so a campaign's devices sniff once per distinct head, whether or not anyone
/// hashed the whole body.
///
/// An input is found by a fingerprint (its lengths, facts and the bytes at both ends of each buffer),
/// then compared byte for byte with what is remembered: no two inputs share a verdict, and a device
/// that hits costs a hash of 1 KiB and a `memcmp` of its head, not a libmagic call. Bounded: when it
/// holds ``capacity`` inputs or ``byteCapacity`` bytes of them, it starts over.
///
/// Thread-safe; two threads that miss on the same input at once both sniff it (the answer is the same).
final class SniffCache: Sendable {
    /// One remembered input, its bytes owned, and its verdict.
    private struct Entry {
        var head: [UInt8]
        var afterTag: [UInt8]?
        var tagEnd: Int?
        var videoHandler: Bool
        var sniff: Sniff

        init(_ input: SniffInput, sniff: Sniff) {
            head = Array(input.head)
            afterTag = input.afterTag.map { Array($0) }
            tagEnd = input.tagEnd
            videoHandler = input.videoHandler
            self.sniff = sniff
        }

        var bytes: Int { head.count + (afterTag?.count ?? 0) }

        func matches(_ input: SniffInput) -> Bool {
            guard tagEnd == input.tagEnd, videoHandler == input.videoHandler, afterTag?.count == input.afterTag?.count
            else { return false }
            return Self.equal(head, input.head) && (afterTag.map { Self.equal($0, input.afterTag) } ?? true)
        }

        private static func equal(_ kept: [UInt8], _ other: UnsafeRawBufferPointer?) -> Bool {
            guard let other, kept.count == other.count else { return false }
            guard let base = other.baseAddress else { return true }
            return kept.withUnsafeBytes { buffer in buffer.baseAddress.map { memcmp($0, base, kept.count) == 0 } ?? true
            }
        }
    }

    private struct State {
        var buckets: [Int: [Entry]] = [:]
        var count = 0
        var bytes = 0
        var sniffed = 0
    }

    private let state = Mutex(State())
    private let warmed = Atomic<Bool>(false)

    /// The first time a download starts, starts loading `sniffer`'s database in the background
    /// (``TypeSniffer/prewarm()``): a single payload's run overlaps the two instead of loading the
    /// database after the body arrived. Every later call is one atomic load.
    func warmUp(_ sniffer: TypeSniffer) {
        guard !warmed.load(ordering: .relaxed),
            warmed.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
        else { return }
        sniffer.prewarm()
    }
    /// Inputs remembered at most.
    let capacity: Int
    /// Bytes of inputs remembered at most (16 KiB heads: 128 of them in the default 4 MiB).
    let byteCapacity: Int

    init(capacity: Int = 256, byteCapacity: Int = 4 << 20) {
        self.capacity = max(1, capacity)
        self.byteCapacity = max(1, byteCapacity)
    }

    /// The sniff of the download `body` summarises: remembered, or asked of `sniffer` and remembered.
    func sniff(body: BodySummary, with sniffer: TypeSniffer) throws(SniffError) -> Sniff {
        try TypeSniffer.withInput(of: body) { input throws(SniffError) in
            if let known = sniff(of: input) { return known }
            let sniff = try sniffer.sniff(input)
            remember(sniff, of: input)
            return sniff
        }
    }

    /// Where `input` is filed: its lengths and facts, and the first and last 256 bytes of each buffer.
    private static func fingerprint(of input: SniffInput) -> Int {
        var hasher = Hasher()
        hasher.combine(input.head.count)
        hasher.combine(input.tagEnd)
        hasher.combine(input.afterTag?.count)
        hasher.combine(input.videoHandler)
        for buffer in [input.head, input.afterTag].compactMap({ $0 }) {
            hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: buffer.prefix(256)))
            hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: buffer.suffix(256)))
        }
        return hasher.finalize()
    }

    /// The sniff remembered for exactly `input`, if any.
    func sniff(of input: SniffInput) -> Sniff? {
        let fingerprint = Self.fingerprint(of: input)
        // The bytes are compared outside the lock: the entries are values, and other devices need the lock.
        let candidates = state.withLock { $0.buckets[fingerprint] } ?? []
        return candidates.first { $0.matches(input) }?.sniff
    }

    /// Remembers `sniff` as the verdict for `input` (its bytes are copied), counting one more input sniffed.
    func remember(_ sniff: Sniff, of input: SniffInput) {
        let fingerprint = Self.fingerprint(of: input)
        let entry = Entry(input, sniff: sniff)
        state.withLock { state in
            state.sniffed += 1
            if state.buckets[fingerprint]?.contains(where: { $0.matches(input) }) == true { return }
            if state.count >= capacity || state.bytes + entry.bytes > byteCapacity {
                state.buckets.removeAll(keepingCapacity: true)
                state.count = 0
                state.bytes = 0
            }
            state.buckets[fingerprint, default: []].append(entry)
            state.count += 1
            state.bytes += entry.bytes
        }
    }

    /// How many inputs are remembered.
    var count: Int { state.withLock { $0.count } }

    /// How many times the sniffer ran for this cache (libmagic's work; a hit adds nothing).
    var sniffed: Int { state.withLock { $0.sniffed } }
}
