import RichPush

/// Which device a burst starts next, and whether it was held back: the admission of a bench run's
/// devices under its concurrency cap and time limit, as a plain value.
///
/// ``BurstRunner`` runs one task per concurrency slot; each free slot asks ``claim(now:)`` for the
/// next device in arrival order, sleeps until that device's arrival, asks ``launch(now:)`` whether
/// it may still start, and reports ``end(now:)`` when it finishes. Time comes in as a value (the
/// offset from the run's start), so every decision is tested without a clock, a socket or a sleep.
///
/// A device is *held back* when it was due before the cap last let a device go: it waited for a slot
/// because every slot was busy, so its latency includes the client's own queue (the report says so).
///
/// ```swift
/// var admission = BurstAdmission(plan: [.init(offset: .zero, index: 0)], timeLimit: .seconds(60))
/// if case .device(let entry, let heldBack, _) = admission.claim(now: .zero), admission.launch(now: .zero) != nil {
///     // ... run device entry.index ...
///     admission.end(now: .milliseconds(40))
/// }
/// ```
struct BurstAdmission: Sendable, Equatable {
    /// One device of the plan: when it arrives (from the run's start) and its global index.
    struct Entry: Sendable, Equatable {
        var offset: Duration
        var index: Int
    }

    /// What a free slot does next.
    enum Claim: Sendable, Equatable {
        /// Run `entry` at its arrival (at once when that has passed). `free` is when it could first
        /// start: its arrival, or now when it waited for this slot.
        case device(Entry, heldBack: Bool, free: Duration)
        /// Nothing more to start: the plan is used up, or the time limit has passed.
        case done
    }

    /// The devices in arrival order.
    let plan: [Entry]
    /// No device is launched at or after this offset.
    let timeLimit: Duration
    /// The next entry of `plan` to hand out.
    private(set) var next = 0
    /// Devices launched and not ended.
    private(set) var inFlight = 0
    /// Devices launched so far.
    private(set) var started = 0
    /// The most devices in flight at once so far.
    private(set) var maxInFlight = 0
    /// No more devices start (time limit, or ``stop()``).
    private(set) var stopped = false
    /// When the cap last let a waiting device go: devices due before then waited for a slot.
    private var capReleased = Duration.zero

    init(plan: [Entry], timeLimit: Duration) {
        // Stable: devices due at the same moment keep their index order.
        self.plan = plan.enumerated().sorted { ($0.element.offset, $0.offset) < ($1.element.offset, $1.offset) }
            .map(\.element)
        self.timeLimit = timeLimit
    }

    /// Devices that were never launched (so far: all that remain; at the end: the run's not-started).
    var notStarted: Int { plan.count - started }

    /// A free slot asks for its next device at `now`.
    mutating func claim(now: Duration) -> Claim {
        guard !stopped, next < plan.count else { return .done }
        let entry = plan[next]
        guard entry.offset < timeLimit, now < timeLimit else {
            stopped = true
            return .done
        }
        next += 1
        return .device(entry, heldBack: entry.offset < capReleased, free: max(entry.offset, now))
    }

    /// The claimed device is due at `now`: the number in flight with it, or nil when it may not start
    /// (the time limit passed while its slot waited, or the run was stopped).
    mutating func launch(now: Duration) -> Int? {
        guard !stopped, now < timeLimit else {
            stopped = true
            return nil
        }
        inFlight += 1
        started += 1
        maxInFlight = max(maxInFlight, inFlight)
        return inFlight
    }

    /// A launched device ended at `now`; its slot is free again.
    mutating func end(now: Duration) {
        inFlight = max(0, inFlight - 1)
        // The next device was already due: it waited for this slot.
        if next < plan.count, plan[next].offset < now { capReleased = now }
    }

    /// Starts nothing more (an interrupted run); devices in flight still end.
    mutating func stop() {
        stopped = true
    }
}
