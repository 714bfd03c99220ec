import Foundation
import RichPush
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
///
/// What a phone does for itself is done per device: the download, the sniff, the verdict. What is
/// the same for every device is done once per run: the payload is read and its URL judged once per
/// network profile (``ServiceExtension/prepare(_:)``), and one task per concurrency slot runs its
/// devices one after another (``BurstAdmission`` decides which and when), instead of a task per device.
package struct BurstRunner: Sendable {
    package let service: ServiceExtension
    package let payload: [UInt8]
    package let schedule: ArrivalSchedule
    /// The global device indices this run covers (all, or one shard's).
    package let indices: [Int]
    /// Devices in flight at most.
    package let concurrency: Int
    /// No device is launched after this long; those in flight end within their own budget.
    package let timeLimit: Duration
    /// The network each device downloads over (default: the service's own, for every device).
    package var networks: NetworkAssignment
    /// How often progress is reported while nothing finishes.
    package var progressInterval: Duration = .milliseconds(250)
    /// The URLs devices draw from, with the payload made for each entry (in the list's order); nil:
    /// every device receives ``payload``.
    package var list: URLList?
    package var listPayloads: [[UInt8]] = []
    /// The shard's index and the run's seed, for the templates' `{shard}` and `{random}`.
    package var shardIndex = 1
    package var seed: UInt64 = 1
    /// Where each device's record goes, when a log was asked for.
    package var log: DeviceLog?
    /// How long after the shared start (`--start-at`) this run began: the report's offsets and timeline
    /// count from the shared start, so the shards' timelines line up there. Latency counts from each
    /// device's own arrival and is not changed by it.
    package var lateness: Duration = .zero

    package init(
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
    package struct Progress: Sendable {
        package var total: Int
        package var started: Int
        package var done: Int
        /// Devices that finished without showing the attachment.
        package var failures: Int
        package var verdicts: [Verdict: Int]
        package var began: ContinuousClock.Instant
        /// The most devices in flight at once so far.
        package var maxInFlight: Int
        /// When the last device is scheduled to arrive, from the start.
        package var lastArrival: Duration
        package var inFlight: Int { started - done }
        package var elapsed: Duration { ContinuousClock.now - began }

        /// Estimated time left: the rest of the schedule, or the devices left at the rate so far, whichever
        /// is longer; nil before anything finished.
        package var remaining: Duration? {
            let seconds = elapsed.inSeconds
            guard done > 0, seconds > 0 else { return nil }
            let byRate = Double(total - done) / (Double(done) / seconds)
            return .seconds(max(byRate, (lastArrival - elapsed).inSeconds, 0))
        }
    }

    /// The run's shared state: the report, the counts and the admission, updated by each slot.
    private struct Shared: Sendable {
        var report: BenchReport
        var progress: Progress
        var admission: BurstAdmission
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
    package func run(into report: inout BenchReport, progress: @escaping @Sendable (Progress) -> Void = { _ in }) async
    {
        let admission = BurstAdmission(
            plan: indices.map { BurstAdmission.Entry(offset: schedule.offset(of: $0), index: $0) },
            timeLimit: timeLimit)
        let began = ContinuousClock.now
        let cpuBefore = ClientLoad.processCPUTime()
        let shared = Guarded(
            Shared(
                report: report,
                progress: Progress(
                    total: admission.plan.count, started: 0, done: 0, failures: 0, verdicts: [:], began: began,
                    maxInFlight: 0, lastArrival: admission.plan.last?.offset ?? .zero),
                admission: admission), observer: progress)
        let deliveries = Targets(
            list: list,
            deliveries: list == nil || listPayloads.isEmpty
                ? [networks.prepared(payload)] : listPayloads.map { networks.prepared($0) },
            shard: shardIndex, seed: seed, log: log)
        let interval = progressInterval
        let origin = began - max(.zero, lateness)
        // The clock: progress at least every `interval`, whether or not devices finish.
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { break }
                shared.deliver(shared.withLock { $0.progress })
            }
        }
        let engine = service.engine
        await withDiscardingTaskGroup { group in
            for slot in 0..<min(concurrency, admission.plan.count) {
                // Each slot lives on one fetch loop: a device's download completes on the loop thread and
                // its verdict, bookkeeping and the next device's download continue there, with no hop to
                // the cooperative pool and back per device.
                group.addTask {
                    await engine.onLoop(slot) {
                        await Self.slot(shared: shared, deliveries: deliveries, began: began, origin: origin)
                    }
                }
            }
            // Devices still running end within their own budget (each has its deadline), so the run
            // ends by the last launch plus one budget at the latest.
        }
        ticker.cancel()
        let cpuAfter = ClientLoad.processCPUTime()
        let wall = ContinuousClock.now - began
        report = shared.withLock { state in
            state.report.notStarted += state.admission.notStarted
            return state.report
        }
        report.durationSeconds = wall.inSeconds
        report.client.measure(
            user: cpuAfter.user - cpuBefore.user, system: cpuAfter.system - cpuBefore.system, wall: wall,
            cores: ProcessInfo.processInfo.activeProcessorCount)
        report.finalize()
        shared.deliver(shared.withLock { $0.progress })
    }

    /// What each device receives: the list's entry for it, its payload prepared per network, the
    /// template expanded. Read-only, shared by every slot.
    struct Targets: Sendable {
        let list: URLList?
        let deliveries: [NetworkAssignment.Deliveries]
        let shard: Int
        let seed: UInt64
        let log: DeviceLog?

        /// Device `index`'s entry, service, payload, network, phone and (for a template, or for the log) URL.
        func device(_ index: Int) -> (
            entry: Int, service: ServiceExtension, payload: ServiceExtension.PreparedPayload, network: String?,
            phone: String?, url: String?
        ) {
            guard let list else {
                let (service, prepared, network, phone) = deliveries[0].device(index)
                return (0, service, prepared, network, phone, nil)
            }
            let entry = list.entry(of: index)
            let (service, prepared, network, phone) = deliveries[min(entry, deliveries.count - 1)].device(index)
            let template = list.entries[entry].template
            guard template.isTemplate else {
                return (entry, service, prepared, network, phone, log == nil ? nil : template.text)
            }
            let url = template.expand(device: index, shard: shard, seed: seed)
            return (entry, service, prepared.retargeted(to: url), network, phone, url)
        }
    }

    /// One concurrency slot: claims the next device, waits for its arrival, runs it, and again, until
    /// the admission has nothing more (or the run is cancelled).
    private static func slot(
        shared: Guarded, deliveries: Targets, began: ContinuousClock.Instant, origin: ContinuousClock.Instant
    ) async {
        while !Task.isCancelled {
            let claim = shared.withLock { $0.admission.claim(now: .now - began) }
            guard case .device(let entry, let heldBack, let free) = claim else { return }
            let arrival = began + entry.offset
            if arrival > .now { try? await Task.sleep(until: arrival, clock: .continuous) }
            let startedAt = ContinuousClock.now
            let launched = shared.withLock { state -> Bool in
                if Task.isCancelled { state.admission.stop() }
                guard let inFlight = state.admission.launch(now: startedAt - began) else { return false }
                state.progress.started = state.admission.started
                state.progress.maxInFlight = state.admission.maxInFlight
                state.report.notePeakInFlight(inFlight, at: startedAt - origin)
                return true
            }
            guard launched else { return }
            let target = deliveries.device(entry.index)
            let result = await target.service.process(target.payload, arrivedAt: arrival)
            finish(
                result.outcome, shared: shared, began: began, origin: origin, scheduled: entry.offset,
                free: began + free, startedAt: startedAt, heldBack: heldBack, network: target.network,
                phone: target.phone, place: (entry.index, target.entry, deliveries.log == nil ? nil : target.url),
                log: deliveries.log)
        }
    }

    /// Counts a finished device and frees its slot. Synchronous and not inlined, so the slot's async
    /// frame holds none of this while the download runs.
    @inline(never)
    private static func finish(
        _ outcome: Outcome, shared: Guarded, began: ContinuousClock.Instant, origin: ContinuousClock.Instant,
        scheduled: Duration, free: ContinuousClock.Instant, startedAt: ContinuousClock.Instant, heldBack: Bool,
        network: String?, phone: String?, place: (index: Int, entry: Int, url: String?), log: DeviceLog?
    ) {
        let now = ContinuousClock.now
        let ended = now - began
        let timings = outcome.download?.timings
        let started = startedAt - began
        // The report's offsets count from the origin: the shared start, or this run's own.
        let shift = began - origin
        var device = DeviceResult(
            verdict: outcome.verdict, reason: outcome.reason, message: outcome.message,
            status: outcome.download?.status ?? 0, bytes: outcome.download?.bytes ?? 0,
            dns: timings?.dns, connect: timings?.connect, tls: timings?.tls, firstByte: timings?.firstByte,
            download: timings?.total, scheduled: scheduled + shift, started: started + shift, ended: ended + shift,
            heldBack: heldBack && started - scheduled > .milliseconds(1),
            schedulingLag: max(.zero, startedAt - free), network: network)
        device.contentExtension = outcome.contentExtension?.outcome
        device.phone = phone
        device.sdkCalls = outcome.sdkCalls ?? []
        device.index = place.index
        device.entry = place.entry
        device.url = URLCredentials.stripped(place.url)
        if let download = outcome.download {
            device.cache = download.cache
            device.httpVersion = download.httpVersion ?? ""
            device.connectionsMade = download.connectionsMade
        }
        let snapshot = shared.withLock { state in
            state.progress.done += 1
            // The devices in flight as this one ends (itself included): a second with only endings
            // (after the last arrival) has its peak too, not 0.
            state.report.notePeakInFlight(state.admission.inFlight, at: now - origin)
            state.admission.end(now: ended)
            // A device cut short by an interruption says nothing about the host: not counted.
            if device.reason == .cancelled {
                state.report.notStarted += 1
            } else {
                state.progress.verdicts[device.verdict, default: 0] += 1
                if device.verdict != .attached { state.progress.failures += 1 }
                state.report.add(device)
            }
            return state.progress
        }
        shared.deliver(snapshot)
        // Outside the run's lock: the log has its own, and formats only when asked for.
        if device.reason != .cancelled { log?.record(device) }
    }
}
