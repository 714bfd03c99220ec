import Foundation

/// Reproduces a campaign's burst at the asset host: many emulated devices, each receiving the push
/// at its scheduled time and running the whole extension pipeline on its own connection.
///
/// Open loop: each device's latency and budget count from its scheduled arrival, so a saturated
/// client or server shows up as latency, not as a slower send (no coordinated omission). When the
/// client's own concurrency cap holds a device back, the device is marked and the report says so.
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
    }

    /// Live counts for a progress line.
    public struct Progress: Sendable {
        public var total: Int
        public var started: Int
        public var done: Int
        public var verdicts: [Verdict: Int]
        public var began: ContinuousClock.Instant
        public var inFlight: Int { started - done }
    }

    /// Runs every device and adds each to `report` as it finishes.
    public func run(into report: inout BenchReport, progress: @Sendable (Progress) -> Void = { _ in }) async {
        let plan = indices.map { (offset: schedule.offset(of: $0), index: $0) }.sorted { $0.offset < $1.offset }
        let began = ContinuousClock.now
        var state = Progress(total: plan.count, started: 0, done: 0, verdicts: [:], began: began)
        let service = self.service
        let payload = self.payload
        let limit = began + timeLimit
        await withTaskGroup(of: DeviceResult.self) { group in
            var inFlight = 0
            func collect(_ device: DeviceResult) {
                inFlight -= 1
                state.done += 1
                // A device cut short by an interruption says nothing about the host: not counted.
                guard device.reason != .cancelled else {
                    report.notStarted += 1
                    return
                }
                state.verdicts[device.verdict, default: 0] += 1
                report.add(device)
                progress(state)
            }
            for entry in plan {
                let arrival = began + entry.offset
                if arrival > .now { try? await Task.sleep(until: arrival, clock: .continuous) }
                var heldBack = false
                while inFlight >= concurrency, let device = await group.next() {
                    heldBack = true
                    collect(device)
                }
                if ContinuousClock.now >= limit || Task.isCancelled { break }
                let scheduled = entry.offset
                inFlight += 1
                state.started += 1
                group.addTask {
                    let started = ContinuousClock.now - began
                    let result = await service.process(payload, arrivedAt: arrival)
                    let outcome = result.outcome
                    let timings = outcome.download?.timings
                    return DeviceResult(
                        verdict: outcome.verdict, reason: outcome.reason, bytes: outcome.download?.bytes ?? 0,
                        dns: timings?.dns, connect: timings?.connect, tls: timings?.tls, firstByte: timings?.firstByte,
                        download: timings?.total, scheduled: scheduled, started: started,
                        ended: ContinuousClock.now - began, heldBack: heldBack && started - scheduled > .milliseconds(1)
                    )
                }
            }
            // Devices still running end within their own budget (each has its deadline), so the run
            // ends by the last launch plus one budget at the latest.
            while let device = await group.next() { collect(device) }
        }
        report.notStarted += plan.count - state.started
        report.durationSeconds = (ContinuousClock.now - began).inSeconds
        report.finalize()
    }
}
