import Foundation
import Synchronization

/// Reproduces a campaign's burst at the asset host: many emulated devices, each receiving the push
/// at its scheduled time and running the whole extension pipeline on its own connection.
///
/// Open loop: each device's latency and budget count from its scheduled arrival, so a saturated
/// client or server shows up as latency, not as a slower send (no coordinated omission). When the
/// client's own concurrency cap holds a device back, the device is marked and the report says so.
///
/// Each device adds itself to the report the moment it finishes, so progress, the in-flight count
/// and the report follow the run as it happens; a clock reports progress at least every
/// ``progressInterval`` even when nothing finishes.
public struct BurstRunner: Sendable {
    public let service: ServiceExtension
    public let payload: [UInt8]
    public let schedule: ArrivalSchedule
    /// The global device indices this run covers (all, or one shard's).
    public let indices: [Int]
    /// Devices in flight at most.
    public let concurrency: Int
    /// No device is launched after this long; those in flight end within their own budget.
    public let timeLimit: Duration
    /// The network each device downloads over (default: the service's own, for every device).
    public var networks: NetworkAssignment
    /// How often progress is reported while nothing finishes.
    public var progressInterval: Duration = .milliseconds(250)

    public init(
        service: ServiceExtension, payload: [UInt8], schedule: ArrivalSchedule, indices: [Int], concurrency: Int,
        timeLimit: Duration
    ) {
        self.service = service
        self.payload = payload
        self.schedule = schedule
        self.indices = indices
        self.concurrency = max(1, concurrency)
        self.timeLimit = timeLimit
        networks = NetworkAssignment(service: service)
    }

    /// Live counts for a progress line.
    public struct Progress: Sendable {
        public var total: Int
        public var started: Int
        public var done: Int
        /// Devices that finished without showing the attachment.
        public var failures: Int
        public var verdicts: [Verdict: Int]
        public var began: ContinuousClock.Instant
        /// The most devices in flight at once so far.
        public var maxInFlight: Int
        /// When the last device is scheduled to arrive, from the start.
        public var lastArrival: Duration
        public var inFlight: Int { started - done }
        public var elapsed: Duration { ContinuousClock.now - began }

        /// Estimated time left: the rest of the schedule, or the devices left at the rate so far, whichever
        /// is longer; nil before anything finished.
        public var remaining: Duration? {
            let seconds = elapsed.inSeconds
            guard done > 0, seconds > 0 else { return nil }
            let byRate = Double(total - done) / (Double(done) / seconds)
            return .seconds(max(byRate, (lastArrival - elapsed).inSeconds, 0))
        }
    }

    /// The run's shared state: the report and the counts, updated by each device as it ends.
    private struct Shared: Sendable {
        var report: BenchReport
        var progress: Progress
        /// The scheduler, waiting for a free slot under the concurrency cap.
        var waiter: CheckedContinuation<Void, Never>?
    }

    /// The shared state behind its lock, shared by reference between the scheduler and the devices.
    private final class Guarded: Sendable {
        let state: Mutex<Shared>
        /// The last progress handed out (done, started): snapshots reach the observer in order, never older
        /// than one it has already seen.
        private let delivered = Mutex((done: -1, started: -1))
        private let observer: @Sendable (Progress) -> Void

        init(_ value: Shared, observer: @escaping @Sendable (Progress) -> Void) {
            state = Mutex(value)
            self.observer = observer
        }

        func withLock<T: Sendable>(_ body: (inout sending Shared) -> sending T) -> T { state.withLock(body) }

        /// Hands `snapshot` to the observer unless a newer one already went out.
        func deliver(_ snapshot: Progress) {
            delivered.withLock { last in
                guard snapshot.done >= last.done, snapshot.started >= last.started else { return }
                last = (snapshot.done, snapshot.started)
                observer(snapshot)
            }
        }
    }

    /// Runs every device and adds each to `report` as it finishes.
    public func run(into report: inout BenchReport, progress: @escaping @Sendable (Progress) -> Void = { _ in }) async {
        let plan = indices.map { (offset: schedule.offset(of: $0), index: $0) }.sorted { $0.offset < $1.offset }
        let began = ContinuousClock.now
        let cpuBefore = ClientLoad.processCPUTime()
        let shared = Guarded(
            Shared(
                report: report,
                progress: Progress(
                    total: plan.count, started: 0, done: 0, failures: 0, verdicts: [:], began: began, maxInFlight: 0,
                    lastArrival: plan.last?.offset ?? .zero)), observer: progress)
        let networks = self.networks
        let payload = self.payload
        let concurrency = self.concurrency
        let limit = began + timeLimit
        let interval = progressInterval
        // The clock: progress at least every `interval`, whether or not devices finish.
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { break }
                shared.deliver(shared.withLock { $0.progress })
            }
        }
        await withDiscardingTaskGroup { group in
            // When the cap last let the scheduler go: devices due before then were held back by it too.
            var capReleased = began
            for entry in plan {
                let arrival = began + entry.offset
                if arrival > .now { try? await Task.sleep(until: arrival, clock: .continuous) }
                // A free slot under the cap: taken at once, or handed over by the next device to end.
                var heldBack = false
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let free = shared.withLock { state -> Bool in
                        if state.progress.inFlight < concurrency {
                            state.progress.started += 1
                            return true
                        }
                        state.waiter = continuation
                        return false
                    }
                    if free { continuation.resume() } else { heldBack = true }
                }
                let released = ContinuousClock.now
                if heldBack { capReleased = released }
                heldBack = heldBack || arrival < capReleased
                if released >= limit || Task.isCancelled {
                    shared.withLock { $0.progress.started -= 1 }
                    break
                }
                shared.withLock { state in
                    state.progress.maxInFlight = max(state.progress.maxInFlight, state.progress.inFlight)
                    state.report.notePeakInFlight(state.progress.inFlight, at: released - began)
                }
                let scheduled = entry.offset
                // The moment this device was free to start: its arrival, or when the cap let it go.
                let free = max(arrival, capReleased)
                let (service, network) = networks.service(for: entry.index)
                group.addTask {
                    let startedAt = ContinuousClock.now
                    let result = await service.process(payload, arrivedAt: arrival)
                    Self.finish(
                        result.outcome, shared: shared, began: began, scheduled: scheduled, free: free,
                        startedAt: startedAt, heldBack: heldBack, network: network)
                }
            }
            // Devices still running end within their own budget (each has its deadline), so the run
            // ends by the last launch plus one budget at the latest.
        }
        ticker.cancel()
        let cpuAfter = ClientLoad.processCPUTime()
        let wall = ContinuousClock.now - began
        report = shared.withLock { state in
            state.report.notStarted += plan.count - state.progress.started
            return state.report
        }
        report.durationSeconds = wall.inSeconds
        report.client.measure(
            user: cpuAfter.user - cpuBefore.user, system: cpuAfter.system - cpuBefore.system, wall: wall,
            cores: ProcessInfo.processInfo.activeProcessorCount)
        report.finalize()
        shared.deliver(shared.withLock { $0.progress })
    }

    /// Counts a finished device and hands its slot to a waiting one. Synchronous and not inlined, so
    /// the device's async frame holds none of this while the download runs.
    @inline(never)
    private static func finish(
        _ outcome: Outcome, shared: Guarded, began: ContinuousClock.Instant, scheduled: Duration,
        free: ContinuousClock.Instant, startedAt: ContinuousClock.Instant, heldBack: Bool, network: String?
    ) {
        let ended = ContinuousClock.now - began
        let timings = outcome.download?.timings
        let started = startedAt - began
        var device = DeviceResult(
            verdict: outcome.verdict, reason: outcome.reason, message: outcome.message,
            status: outcome.download?.status ?? 0, bytes: outcome.download?.bytes ?? 0,
            dns: timings?.dns, connect: timings?.connect, tls: timings?.tls, firstByte: timings?.firstByte,
            download: timings?.total, scheduled: scheduled, started: started, ended: ended,
            heldBack: heldBack && started - scheduled > .milliseconds(1),
            schedulingLag: max(.zero, startedAt - free), network: network)
        device.contentExtension = outcome.contentExtension?.outcome
        let (snapshot, waiter) = shared.withLock { state in
            state.progress.done += 1
            // A device cut short by an interruption says nothing about the host: not counted.
            if device.reason == .cancelled {
                state.report.notStarted += 1
            } else {
                state.progress.verdicts[device.verdict, default: 0] += 1
                if device.verdict != .attached { state.progress.failures += 1 }
                state.report.add(device)
            }
            // The slot passes straight to a waiting device, so in flight never passes the cap.
            let waiter = state.waiter
            if waiter != nil {
                state.waiter = nil
                state.progress.started += 1
            }
            return (state.progress, waiter)
        }
        waiter?.resume()
        shared.deliver(snapshot)
    }
}
