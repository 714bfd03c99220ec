import Testing

@testable import CurlKit

/// The inbox's decisions in every order the loop thread, submitters and stoppers can take.
@Suite struct LoopInboxTests {
    @Test func queuesWithoutAWakeWhileTheLoopIsAwake() {
        var inbox = LoopInbox<Int>()
        #expect(inbox.submit(1) == .queued)
        #expect(inbox.cancel(7) == false)
        let drain = inbox.drain(previousPassIdle: false)
        #expect(drain.arrived == [1])
        #expect(drain.cancelled == [7])
        #expect(!drain.stopping)
    }

    @Test func wakesASleepingLoopOnceForTheFirstArrival() {
        var inbox = LoopInbox<Int>()
        _ = inbox.drain(previousPassIdle: true)
        #expect(inbox.maySleep)
        #expect(inbox.submit(1) == .queuedWake)
        #expect(!inbox.maySleep)
        #expect(inbox.submit(2) == .queued)
        #expect(inbox.cancel(9) == false)
        #expect(inbox.drain(previousPassIdle: false).arrived == [1, 2])
    }

    @Test func wakesASleepingLoopForACancellation() {
        var inbox = LoopInbox<Int>()
        _ = inbox.drain(previousPassIdle: true)
        #expect(inbox.cancel(3) == true)
        #expect(!inbox.maySleep)
    }

    @Test func doesNotSleepAfterABusyPass() {
        var inbox = LoopInbox<Int>()
        _ = inbox.drain(previousPassIdle: false)
        #expect(!inbox.maySleep)
    }

    @Test func onlyTheFirstStopWakesTheLoop() {
        var inbox = LoopInbox<Int>()
        _ = inbox.drain(previousPassIdle: true)
        #expect(inbox.stop() == true)
        #expect(inbox.stop() == false)
        #expect(!inbox.maySleep)
        #expect(inbox.drain(previousPassIdle: true).stopping)
    }

    @Test func rejectsSubmissionsOnceStoppingAndNeverAsksForAWake() {
        var inbox = LoopInbox<Int>()
        _ = inbox.drain(previousPassIdle: true)
        _ = inbox.stop()
        #expect(inbox.submit(1) == .rejected)
        #expect(inbox.cancel(1) == false)
    }

    @Test func handsBackWhatArrivedAfterTheLastDrainWhenCleaningUp() {
        var inbox = LoopInbox<Int>()
        #expect(inbox.submit(1) == .queued)
        _ = inbox.drain(previousPassIdle: false)
        #expect(inbox.submit(2) == .queued)
        #expect(inbox.cancel(5) == false)
        _ = inbox.stop()
        #expect(inbox.cleanUp() == [2])
        #expect(inbox.phase == .cleanedUp)
    }

    /// The race of the old loop: a submit that decided to wake the loop, then a stop that released it,
    /// then the late wake-up. Now a submit after the clean-up is rejected and asks for no wake-up, and
    /// stop after clean-up asks for none either.
    @Test func asksForNoWakeAfterTheLoopIsReleased() {
        var inbox = LoopInbox<Int>()
        _ = inbox.drain(previousPassIdle: true)
        _ = inbox.stop()
        _ = inbox.cleanUp()
        #expect(inbox.submit(1) == .rejected)
        #expect(inbox.cancel(1) == false)
        #expect(inbox.stop() == false)
        #expect(!inbox.maySleep)
    }
}
