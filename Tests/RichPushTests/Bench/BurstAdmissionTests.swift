import Testing

@testable import RichPush
@testable import RichPushRuns

/// The burst's admission decided without a clock: times are offsets given to each call.
@Suite struct BurstAdmissionTests {
    typealias Entry = BurstAdmission.Entry

    func ms(_ value: Int) -> Duration { .milliseconds(value) }

    func plan(_ offsets: [Int]) -> [Entry] {
        offsets.enumerated().map { Entry(offset: .milliseconds($0.element), index: $0.offset) }
    }

    @Test func handsDevicesOutInArrivalOrderAndTiesByIndex() {
        var admission = BurstAdmission(
            plan: [
                Entry(offset: ms(30), index: 0), Entry(offset: ms(10), index: 1), Entry(offset: ms(10), index: 2),
                Entry(offset: .zero, index: 3),
            ], timeLimit: .seconds(60))
        var order: [Int] = []
        while case .device(let entry, _, _) = admission.claim(now: .zero) { order.append(entry.index) }
        #expect(order == [3, 1, 2, 0])
        #expect(admission.claim(now: .zero) == .done)
    }

    @Test func aDeviceThatWaitedForASlotIsHeldBackAndOneThatDidNotIsNot() {
        // Two slots, four devices due at once: the first two start at once, the others wait for a slot.
        var admission = BurstAdmission(plan: plan([0, 0, 0, 0]), timeLimit: .seconds(60))
        #expect(admission.claim(now: ms(1)) == .device(Entry(offset: .zero, index: 0), heldBack: false, free: ms(1)))
        #expect(admission.launch(now: ms(1)) == 1)
        #expect(admission.claim(now: ms(2)) == .device(Entry(offset: .zero, index: 1), heldBack: false, free: ms(2)))
        #expect(admission.launch(now: ms(2)) == 2)
        admission.end(now: ms(40))
        #expect(admission.claim(now: ms(40)) == .device(Entry(offset: .zero, index: 2), heldBack: true, free: ms(40)))
        #expect(admission.launch(now: ms(40)) == 2)
        admission.end(now: ms(45))
        #expect(admission.claim(now: ms(45)) == .device(Entry(offset: .zero, index: 3), heldBack: true, free: ms(45)))
        #expect(admission.maxInFlight == 2)
    }

    @Test func aSlotFreedBeforeTheNextArrivalHoldsNothingBack() {
        var admission = BurstAdmission(plan: plan([0, 100]), timeLimit: .seconds(60))
        _ = admission.claim(now: .zero)
        _ = admission.launch(now: .zero)
        admission.end(now: ms(50))
        // Due at 100 ms, claimed at 50 ms: it sleeps until its arrival and starts on time.
        #expect(
            admission.claim(now: ms(50)) == .device(Entry(offset: ms(100), index: 1), heldBack: false, free: ms(100)))
        #expect(admission.launch(now: ms(100)) == 1)
    }

    @Test func devicesDueBeforeTheCapLastReleasedAreHeldBackEvenWhenASlotWasFree() {
        // One slot: device 1 (due 10 ms) waits until 50 ms; device 2 (due 20 ms) was due before that release too.
        var admission = BurstAdmission(plan: plan([0, 10, 20, 500]), timeLimit: .seconds(60))
        _ = admission.claim(now: .zero)
        _ = admission.launch(now: .zero)
        admission.end(now: ms(50))
        guard case .device(_, true, _) = admission.claim(now: ms(50)) else {
            Issue.record("device 1 waited for the slot")
            return
        }
        _ = admission.launch(now: ms(50))
        admission.end(now: ms(60))
        guard case .device(_, true, _) = admission.claim(now: ms(60)) else {
            Issue.record("device 2 was due before the cap released device 1")
            return
        }
        _ = admission.launch(now: ms(60))
        admission.end(now: ms(70))
        // Device 3 is due later than any release: on time.
        guard case .device(_, false, let free) = admission.claim(now: ms(70)) else {
            Issue.record("device 3 did not wait")
            return
        }
        #expect(free == ms(500))
    }

    @Test func nothingStartsAtOrAfterTheTimeLimitAndEveryRemainingDeviceIsNotStarted() {
        var admission = BurstAdmission(plan: plan([0, 10, 2_000, 3_000]), timeLimit: .seconds(1))
        _ = admission.claim(now: .zero)
        _ = admission.launch(now: .zero)
        // Claimed before the limit, but its slot's wake-up came after it: not launched.
        guard case .device = admission.claim(now: ms(5)) else {
            Issue.record("device 1 is due before the limit")
            return
        }
        #expect(admission.launch(now: ms(1_000)) == nil)
        #expect(admission.stopped)
        #expect(admission.claim(now: ms(5)) == .done)
        admission.end(now: ms(1_200))
        #expect(admission.started == 1)
        #expect(admission.notStarted == 3)
    }

    @Test func aDeviceDueAfterTheLimitIsNeverClaimed() {
        var admission = BurstAdmission(plan: plan([0, 1_500]), timeLimit: .seconds(1))
        _ = admission.claim(now: .zero)
        _ = admission.launch(now: .zero)
        #expect(admission.claim(now: ms(1)) == .done)
        #expect(admission.notStarted == 1)
    }

    @Test func stopEndsClaimsAndLaunchesButNotTheDevicesInFlight() {
        var admission = BurstAdmission(plan: plan([0, 0, 0]), timeLimit: .seconds(60))
        _ = admission.claim(now: .zero)
        _ = admission.launch(now: .zero)
        _ = admission.claim(now: .zero)
        admission.stop()
        #expect(admission.launch(now: ms(1)) == nil)
        #expect(admission.claim(now: ms(1)) == .done)
        #expect(admission.inFlight == 1)
        admission.end(now: ms(2))
        #expect(admission.inFlight == 0)
        #expect(admission.notStarted == 2)
    }

    @Test func anEmptyPlanIsDoneAtOnce() {
        var admission = BurstAdmission(plan: [], timeLimit: .seconds(1))
        #expect(admission.claim(now: .zero) == .done)
        #expect(admission.notStarted == 0)
    }

    /// Every interleaving of `slots` slots over a small burst: the cap holds, every device is
    /// launched exactly once, and held-back marks only devices that were due before a release.
    @Test(arguments: [1, 2, 3])
    func everyInterleavingKeepsTheCapAndLaunchesEachDeviceOnce(slots: Int) {
        let offsets = [0, 0, 5, 5, 20]
        // Each step: a slot that is idle claims and launches, or a running slot ends. Explore every choice.
        struct State {
            var admission: BurstAdmission
            var running: [Int] = []  // indices in flight
            var idle: Int
            var now = 0
            var launched: [Int] = []
            var heldBack: [Int: Bool] = [:]
        }
        var explored = 0
        func explore(_ state: State) {
            var anyMove = false
            if state.idle > 0 {
                var next = state
                switch next.admission.claim(now: .milliseconds(next.now)) {
                case .device(let entry, let held, let free):
                    next.now = max(next.now, offsets[entry.index])
                    #expect(free >= entry.offset)
                    if let count = next.admission.launch(now: .milliseconds(next.now)) {
                        #expect(count <= slots)
                        next.running.append(entry.index)
                        next.idle -= 1
                        next.launched.append(entry.index)
                        next.heldBack[entry.index] = held
                        // Held back only when a release came after the device was due.
                        if held { #expect(next.now > offsets[entry.index]) }
                        anyMove = true
                        explore(next)
                    }
                case .done:
                    break
                }
            }
            for position in state.running.indices {
                var next = state
                next.now += 7
                next.running.remove(at: position)
                next.idle += 1
                next.admission.end(now: .milliseconds(next.now))
                anyMove = true
                explore(next)
            }
            if !anyMove {
                explored += 1
                #expect(state.running.isEmpty)
                #expect(state.launched.sorted() == Array(offsets.indices))
                #expect(state.admission.notStarted == 0)
                #expect(state.admission.maxInFlight <= slots)
            }
        }
        explore(State(admission: BurstAdmission(plan: plan(offsets), timeLimit: .seconds(60)), idle: slots))
        #expect(explored > 0)
    }
}
