/// The decisions of ``SharedDownloads``, as a plain value with no I/O.
///
/// Waiters, cancellation handlers and finishing downloads each call one method under the owner's lock
/// and get back what to do: start a download, hand an entry to waiters, cancel a download, remove a
/// file. The owner performs it (it holds the continuations and the download tasks, keyed by the ids
/// this value hands out). Keeping the decisions here, away from curl and the store, lets tests walk
/// every order in which payloads can ask, leave and finish.
///
/// The life of a URL: no slot -> `running` (one download, started by its first waiter, whose id is
/// the download's generation; later waiters join it) -> either `kept` (a success, or a failure that
/// depends on the URL alone: every later waiter gets it at once) or no slot again (a failure that
/// belongs to the payload that started it, or every waiter left: a later waiter starts a new
/// download). `Entry` is what a waiter receives; the machine only reads what ``Settlement`` says
/// about it.
///
/// At most ``keptLimit`` outcomes are kept (an entry holds the body's head for the sniffer, up to
/// 32 KiB): past it, the one used least recently is forgotten, and a later payload naming its URL
/// downloads it again. A forgotten success's cache file stays until ``removeAll()``, since a payload
/// handed the entry may be linking it at that moment.
struct SharedDownloadsMachine<Entry> {
    /// What a finished download came to, as far as sharing is concerned.
    enum Settlement: Equatable {
        /// The body is in the cache file `file`.
        case downloaded(file: String)
        /// The download failed with `code`.
        case failed(FetchError.Code)

        /// Whether every payload naming the URL would get this outcome too, so it is kept.
        var dependsOnURLAlone: Bool {
            switch self {
            case .downloaded: true
            case .failed(let code): SharedDownloadsMachine.dependsOnURLAlone(code)
            }
        }
    }

    /// What a waiter does after ``attend(_:url:)``.
    enum AttendAction {
        /// Its task was cancelled before it registered: return `cancelled` at once.
        case cancelled
        /// The URL's outcome is kept: return it at once (it came from another payload's download).
        case kept(Entry)
        /// A download of the URL is running: wait for it.
        case wait
        /// No download is running or kept: start one, whose generation is the waiter's id, and wait.
        case start(generation: UInt64)
    }

    /// What a cancellation handler does after ``leave(_:url:)``.
    struct LeaveAction: Equatable {
        /// Resume the waiter with `cancelled` (it was waiting).
        var resumeCancelled = false
        /// Cancel the download of this generation: its last waiter has gone.
        var cancelDownload: UInt64?
    }

    /// One waiter to resume when a download finishes.
    struct Delivery: Equatable {
        var waiter: UInt64
        /// Whether another payload's download produced the entry (the waiter did not start it).
        var fromOther: Bool
    }

    /// What the download's task does after ``finish(_:generation:settlement:)``.
    enum FinishAction: Equatable {
        /// Resume these waiters with the entry.
        case deliver([Delivery])
        /// Nobody waits for this download any more: remove its cache file, if it made one.
        case discard(file: String?)
    }

    /// What ``removeAll()`` leaves the owner to do.
    struct Removal: Equatable {
        /// The kept cache files to remove.
        var files: [String]
        /// The generations of the downloads still running, to cancel.
        var cancel: [UInt64]
    }

    struct Running: Equatable {
        /// The id of the waiter that started it.
        var generation: UInt64
        /// Who waits, in arrival order.
        var waiters: [UInt64]
    }

    enum Slot {
        case running(Running)
        case kept(Entry)
    }

    /// The most outcomes kept at once.
    let keptLimit: Int
    private(set) var slots: [String: Slot] = [:]
    /// When each kept outcome was last stored or handed out (a count of those events).
    private(set) var keptUse: [String: UInt64] = [:]
    private var useClock: UInt64 = 0
    private(set) var nextWaiter: UInt64 = 0
    /// Waiters given an id but not yet registered (cancellation can arrive in between).
    private(set) var pending: Set<UInt64> = []
    /// Pending waiters whose task was cancelled before they registered.
    private(set) var cancelledEarly: Set<UInt64> = []
    /// The cache files of kept successes, removed by ``removeAll()``.
    private(set) var files: [String] = []

    /// The default ``keptLimit`` (``SharedDownloads``' too): about 32 MiB of kept heads at most.
    static var defaultKeptLimit: Int { 1024 }

    init(keptLimit: Int = Self.defaultKeptLimit) { self.keptLimit = max(keptLimit, 1) }

    /// Whether a failure depends on the URL alone, so every payload naming the URL would get it too.
    ///
    /// The others belong to the payload that met them (its deadline, its cancellation, a stopped
    /// engine, the client's descriptors or disk, a network hiccup): a later payload may do better.
    static func dependsOnURLAlone(_ code: FetchError.Code) -> Bool {
        code.kind.facts.dependsOnURLAlone
    }

    /// Whether a waiter asks once more after its delivery: only when another payload's download
    /// failed for a reason of that payload's own, and the waiter is neither cancelled nor out of time.
    static func triesAgain(fromOther: Bool, settlement: Settlement, cancelled: Bool, timeLeft: Bool) -> Bool {
        fromOther && !settlement.dependsOnURLAlone && !cancelled && timeLeft
    }

    /// A new waiter's id, registered as pending until it calls ``attend(_:url:)``.
    mutating func register() -> UInt64 {
        nextWaiter += 1
        pending.insert(nextWaiter)
        return nextWaiter
    }

    /// The registered `waiter` asks for `url`.
    mutating func attend(_ waiter: UInt64, url: String) -> AttendAction {
        pending.remove(waiter)
        if cancelledEarly.remove(waiter) != nil { return .cancelled }
        switch slots[url] {
        case .kept(let entry)?:
            touch(url)
            return .kept(entry)
        case .running(var running)?:
            running.waiters.append(waiter)
            slots[url] = .running(running)
            return .wait
        case nil:
            slots[url] = .running(Running(generation: waiter, waiters: [waiter]))
            return .start(generation: waiter)
        }
    }

    /// `waiter`'s task was cancelled: it stops waiting, and the download stops when it was the last.
    mutating func leave(_ waiter: UInt64, url: String) -> LeaveAction {
        if pending.contains(waiter) {
            cancelledEarly.insert(waiter)
            return LeaveAction()
        }
        guard case .running(var running)? = slots[url], let index = running.waiters.firstIndex(of: waiter) else {
            // It was delivered already (or got a kept entry): nothing to undo.
            return LeaveAction()
        }
        running.waiters.remove(at: index)
        if running.waiters.isEmpty {
            slots[url] = nil
            return LeaveAction(resumeCancelled: true, cancelDownload: running.generation)
        }
        slots[url] = .running(running)
        return LeaveAction(resumeCancelled: true)
    }

    /// The download of `url` started by `generation` ended with `entry`.
    mutating func finish(_ url: String, generation: UInt64, entry: Entry, settlement: Settlement) -> FinishAction {
        guard case .running(let running)? = slots[url], running.generation == generation else {
            // Abandoned (every waiter left; a later download may be running): nobody will link the file.
            if case .downloaded(let file) = settlement { return .discard(file: file) }
            return .discard(file: nil)
        }
        slots[url] = nil
        if settlement.dependsOnURLAlone { keep(entry, for: url) }
        if case .downloaded(let file) = settlement { files.append(file) }
        return .deliver(running.waiters.map { Delivery(waiter: $0, fromOther: $0 != generation) })
    }

    /// Keeps `entry` for `url`, forgetting the least recently used outcome past ``keptLimit``.
    private mutating func keep(_ entry: Entry, for url: String) {
        slots[url] = .kept(entry)
        touch(url)
        guard keptUse.count > keptLimit, let oldest = keptUse.min(by: { $0.value < $1.value })?.key else { return }
        keptUse[oldest] = nil
        slots[oldest] = nil
    }

    private mutating func touch(_ url: String) {
        useClock += 1
        keptUse[url] = useClock
    }

    /// The end of the run: the kept files to remove and the running downloads to cancel.
    ///
    /// Kept failures stay (they cost nothing); a download cancelled here still finishes through
    /// ``finish(_:generation:entry:settlement:)`` and hands its waiters its `cancelled` entry.
    mutating func removeAll() -> Removal {
        defer { files.removeAll() }
        let running = slots.values.compactMap { slot -> UInt64? in
            if case .running(let running) = slot { return running.generation }
            return nil
        }
        return Removal(files: files, cancel: running.sorted())
    }
}

extension SharedDownloadsMachine: Sendable where Entry: Sendable {}
extension SharedDownloadsMachine.Slot: Sendable where Entry: Sendable {}
extension SharedDownloadsMachine.AttendAction: Sendable where Entry: Sendable {}
extension SharedDownloadsMachine: Equatable where Entry: Equatable {}
extension SharedDownloadsMachine.Slot: Equatable where Entry: Equatable {}
extension SharedDownloadsMachine.AttendAction: Equatable where Entry: Equatable {}
