import Synchronization

/// What `serve --edge` emulates: a CDN edge in front of the served folder, for tests and the demo.
///
/// ```swift
/// let server = try AssetServer(root: "Samples/assets", edge: EdgeOptions(capacity: 100, fill: .milliseconds(80)))
/// ```
package struct EdgeOptions: Sendable, Equatable {
    /// Objects the edge holds; the least recently used is evicted past it.
    package var capacity: Int
    /// How long a miss takes to fill from the origin (the folder): the miss's answer waits that long.
    package var fill: Duration
    /// The cache's name in `Cache-Status`.
    package var name = "richpush-edge"

    package init(capacity: Int = 1000, fill: Duration = .milliseconds(50)) {
        self.capacity = max(1, capacity)
        self.fill = max(.zero, fill)
    }
}

/// The edge's cache: an LRU of request targets (path and query, as a CDN's default cache key) with
/// the moment each was filled.
///
/// A target not held is a miss: it is stored at once, ready when its fill delay has passed, and the
/// miss is answered then. A request for a target still filling waits for the same fill and is a
/// hit (collapsed into it: the origin is asked once, as CDNs do). A held target is a hit with its age.
/// Every answer carries `Cache-Status` (RFC 9211) and a hit also `Age`.
final class EdgeCache: Sendable {
    /// What a request gets.
    enum Lookup: Equatable {
        /// Answer now (or at `ready`, when collapsed into a fill), from cache.
        case hit(ready: ContinuousClock.Instant, ageSeconds: Int)
        /// Not held: answer once the fill is done, at `ready`.
        case miss(ready: ContinuousClock.Instant)
    }

    let options: EdgeOptions
    private let state: Mutex<LRU>
    private let hitCount = Atomic<Int>(0)
    private let missCount = Atomic<Int>(0)

    init(_ options: EdgeOptions) {
        self.options = options
        state = Mutex(LRU(capacity: options.capacity))
    }

    /// Hits and misses answered so far.
    var counts: (hits: Int, misses: Int) { (hitCount.load(ordering: .relaxed), missCount.load(ordering: .relaxed)) }

    func lookup(_ key: String, now: ContinuousClock.Instant = .now) -> Lookup {
        let fill = options.fill
        let result = state.withLock { lru -> Lookup in
            if let ready = lru.touch(key) {
                let age = ready < now ? Int((now - ready).components.seconds) : 0
                return .hit(ready: ready, ageSeconds: age)
            }
            let ready = now + fill
            lru.insert(key, ready: ready)
            return .miss(ready: ready)
        }
        switch result {
        case .hit: hitCount.wrappingAdd(1, ordering: .relaxed)
        case .miss: missCount.wrappingAdd(1, ordering: .relaxed)
        }
        return result
    }

    /// The response headers for `lookup`.
    func headers(_ lookup: Lookup) -> [(String, String)] {
        switch lookup {
        case .hit(_, let age): [("Cache-Status", "\(options.name); hit"), ("Age", String(age))]
        case .miss: [("Cache-Status", "\(options.name); fwd=uri-miss; stored")]
        }
    }

    /// A least-recently-used map over arrays: a doubly linked list of slots and a key index, O(1)
    /// per touch, insert and eviction.
    struct LRU: Sendable {
        let capacity: Int
        private var slots: [String: Int] = [:]
        private var keys: [String] = []
        private var ready: [ContinuousClock.Instant] = []
        private var previous: [Int] = []
        private var next: [Int] = []
        /// Most recent and least recent slot, -1 when empty.
        private var head = -1
        private var tail = -1

        init(capacity: Int) { self.capacity = max(1, capacity) }

        var count: Int { slots.count }

        /// The moment `key` was (or will be) filled, moved to the front; nil when not held.
        mutating func touch(_ key: String) -> ContinuousClock.Instant? {
            guard let slot = slots[key] else { return nil }
            unlink(slot)
            pushFront(slot)
            return ready[slot]
        }

        /// Holds `key` (not held yet), evicting the least recently used past the capacity.
        mutating func insert(_ key: String, ready moment: ContinuousClock.Instant) {
            let slot: Int
            if slots.count >= capacity, tail >= 0 {
                slot = tail
                unlink(slot)
                slots[keys[slot]] = nil
                keys[slot] = key
                ready[slot] = moment
            } else {
                slot = keys.count
                keys.append(key)
                ready.append(moment)
                previous.append(-1)
                next.append(-1)
            }
            slots[key] = slot
            pushFront(slot)
        }

        /// Whether `key` is held (no reordering).
        func holds(_ key: String) -> Bool { slots[key] != nil }

        private mutating func unlink(_ slot: Int) {
            let (before, after) = (previous[slot], next[slot])
            if before >= 0 { next[before] = after } else { head = after }
            if after >= 0 { previous[after] = before } else { tail = before }
            previous[slot] = -1
            next[slot] = -1
        }

        private mutating func pushFront(_ slot: Int) {
            next[slot] = head
            previous[slot] = -1
            if head >= 0 { previous[head] = slot }
            head = slot
            if tail < 0 { tail = slot }
        }
    }
}
