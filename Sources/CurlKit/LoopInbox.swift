/// The decisions of a ``CurlLoop``'s inbox, as a plain value with no I/O.
///
/// Submitters, cancellers, stoppers and the loop thread each call one method under the loop's lock
/// and get back what to do; the owner performs it while still holding the lock where the action
/// touches the event loop (a wake-up write, the final clean-up). Keeping the decisions here, away
/// from curl and epoll, lets tests walk every order in which the threads can interleave.
///
/// The life of an inbox: `running` (the loop polls or sleeps) -> `stopping` (stop was asked; the
/// loop is finishing its transfers) -> `cleanedUp` (the loop thread has left its loop and released
/// the multi handle and the event loop, under the lock). Nothing touches the event loop once it is
/// cleaned up: every path that would wake it asks the inbox first, under the same lock.
struct LoopInbox<Item> {
    enum Phase: Equatable {
        case running, stopping, cleanedUp
    }

    /// What a submitter does after ``submit(_:)``.
    enum SubmitAction: Equatable {
        /// The item is queued and the loop is asleep: write the wake-up (under the lock).
        case queuedWake
        /// The item is queued; the loop will see it on its next pass.
        case queued
        /// The loop has stopped: complete the item at once as "engine stopped".
        case rejected
    }

    /// What the loop thread takes on one pass.
    struct Drain {
        var arrived: [Item]
        var cancelled: [UInt64]
        var stopping: Bool
    }

    private(set) var phase: Phase = .running
    private(set) var pending: [Item] = []
    private(set) var cancelled: [UInt64] = []
    /// The loop declared itself idle and may block: a submitter must wake it.
    private(set) var sleeping = false

    /// Queues `item`, unless the loop is stopping or gone.
    mutating func submit(_ item: Item) -> SubmitAction {
        guard phase == .running else { return .rejected }
        pending.append(item)
        return takeWake() ? .queuedWake : .queued
    }

    /// Queues the cancellation of transfer `id`; returns whether to wake the loop.
    mutating func cancel(_ id: UInt64) -> Bool {
        guard phase == .running else { return false }
        cancelled.append(id)
        return takeWake()
    }

    /// Marks the inbox as stopping; returns whether this call was the first, which then wakes the loop.
    mutating func stop() -> Bool {
        guard phase == .running else { return false }
        phase = .stopping
        sleeping = false
        return true
    }

    /// The loop thread takes what arrived. When the previous pass did nothing and nothing is waiting,
    /// the loop declares itself asleep, so the next submitter wakes it: both under one lock, so no
    /// wake-up is lost.
    mutating func drain(previousPassIdle idle: Bool) -> Drain {
        let drain = Drain(arrived: pending, cancelled: cancelled, stopping: phase != .running)
        pending.removeAll(keepingCapacity: true)
        cancelled.removeAll(keepingCapacity: true)
        sleeping = idle && phase == .running
        return drain
    }

    /// Whether the loop may block in its wait (nothing arrived since it declared itself asleep).
    var maySleep: Bool { sleeping && pending.isEmpty && cancelled.isEmpty && phase == .running }

    /// The loop thread leaves its loop and releases the event loop before it lets go of the lock.
    ///
    /// Returns the items that arrived after its last drain (to complete as "engine stopped") and
    /// the cancellations nobody will act on.
    mutating func cleanUp() -> [Item] {
        phase = .cleanedUp
        sleeping = false
        cancelled.removeAll()
        defer { pending.removeAll() }
        return pending
    }

    private mutating func takeWake() -> Bool {
        defer { sleeping = false }
        return sleeping
    }
}
