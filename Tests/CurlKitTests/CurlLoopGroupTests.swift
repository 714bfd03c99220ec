import CurlKit
import Dispatch
import Foundation
import Testing

/// The loop group's lifecycle, without a network: libcurl's own answers for what cannot start.
@Suite struct CurlLoopGroupTests {
    @Test func initializesLibcurlOnce() {
        #expect(CurlRuntime.ensureInitialized())
        #expect(CurlRuntime.ensureInitialized())
        #expect(CurlRuntime.version.hasPrefix("libcurl/"))
    }

    @Test func startsTheRequestedNumberOfLoops() throws {
        let group = try CurlLoopGroup(loops: 3)
        defer { group.stop() }
        #expect(group.loopCount == 3)
        #expect(group.inFlight == 0)
    }

    @Test func stopIsIdempotent() throws {
        let group = try CurlLoopGroup(loops: 2)
        group.stop()
        group.stop()
    }

    @Test func refusesASchemeOutsideTheAllowedList() async throws {
        let group = try CurlLoopGroup(loops: 1)
        defer { group.stop() }
        // A deadline a loaded machine's loop thread cannot miss before it takes the transfer.
        let spec = TransferSpec(url: "gopher://127.0.0.1/x", deadline: .now + .seconds(60))
        let outcome = await group.transfer(spec, writingTo: -1)
        #expect(outcome.failure == .schemeRefused)
        #expect(group.inFlight == 0)
    }

    @Test func failsATransferWhoseDeadlineHasPassed() async throws {
        let group = try CurlLoopGroup(loops: 1)
        defer { group.stop() }
        let spec = TransferSpec(url: "https://127.0.0.1:1/x", deadline: .now - .seconds(1))
        let outcome = await group.transfer(spec, writingTo: -1)
        #expect(outcome.failure == .deadlineExceeded)
        #expect(outcome.timeoutMilliseconds == 0)
    }

    @Test func toleratesADeadlineTooFarAwayToCountInMilliseconds() async throws {
        let group = try CurlLoopGroup(loops: 1)
        defer { group.stop() }
        // Port 1 on loopback refuses at once; the point is that the huge deadline does not trap.
        let spec = TransferSpec(
            url: "http://127.0.0.1:1/x", schemes: ["http"], deadline: .now + .seconds(Int64.max / 2))
        let outcome = await group.transfer(spec, writingTo: -1)
        #expect(outcome.failure == .connectFailed)
    }

    @Test func completesSubmissionsAfterStopAtOnce() async throws {
        let group = try CurlLoopGroup(loops: 1)
        group.stop()
        let spec = TransferSpec(url: "https://127.0.0.1:1/x", deadline: .now + .seconds(5))
        let outcome = await group.transfer(spec, writingTo: -1)
        #expect(outcome.failure == .engineStopped)
    }

    /// Submissions, cancellations and two stops racing: every transfer completes exactly once and
    /// nothing touches the loop after it is released (under AddressSanitizer, a late wake-up into the
    /// freed loop is a use-after-free report; scripts/test --asan runs this).
    @Test(arguments: 0..<20) func stopsWhileSubmissionsAndCancellationsArrive(round: Int) async throws {
        let group = try CurlLoopGroup(loops: 2)
        let spec = TransferSpec(url: "http://127.0.0.1:1/x", schemes: ["http"], deadline: .now + .seconds(5))
        let completed = await withTaskGroup(of: Bool.self) { tasks in
            for index in 0..<64 {
                tasks.addTask {
                    let transfer = Task { await group.transfer(spec, writingTo: -1) }
                    if index % 3 == 0 { transfer.cancel() }
                    _ = await transfer.value
                    return true
                }
                if index == 20 + round {
                    tasks.addTask {
                        group.stop(); return false
                    }
                }
            }
            tasks.addTask {
                group.stop(); return false
            }
            var count = 0
            for await finished in tasks where finished { count += 1 }
            return count
        }
        #expect(completed == 64)
        #expect(group.inFlight == 0)
    }

    /// The name of the thread this runs on (a loop's thread is `richpush.curl.N`).
    static func threadName() -> String? { Thread.current.name }

    /// A task that chose a loop runs on that loop's thread, before its transfer and after it: the
    /// completion continues the task where the transfer ended, not on the cooperative pool.
    @Test func aTaskOnALoopRunsOnItsThreadAcrossATransfer() async throws {
        let group = try CurlLoopGroup(loops: 2)
        defer { group.stop() }
        let spec = TransferSpec(url: "http://127.0.0.1:1/x", schemes: ["http"], deadline: .now + .seconds(60))
        let (before, failure, after) = await group.onLoop(3) {
            let before = Self.threadName()
            let outcome = await group.transfer(spec, writingTo: -1)
            return (before, outcome.failure, Self.threadName())
        }
        #expect(before == "richpush.curl.1")
        #expect(failure == .connectFailed)
        #expect(after == "richpush.curl.1")
        #expect(group.inFlight == 0)
    }

    /// A task on a loop that has stopped still runs to its end (on the global executor): nothing
    /// enqueued on a stopped loop is lost.
    @Test func aTaskOnAStoppedLoopStillFinishes() async throws {
        let group = try CurlLoopGroup(loops: 1)
        group.stop()
        let spec = TransferSpec(url: "http://127.0.0.1:1/x", schemes: ["http"], deadline: .now + .seconds(60))
        let failure = await group.onLoop(0) { await group.transfer(spec, writingTo: -1).failure }
        #expect(failure == .engineStopped)
    }

    /// Tasks living on the loops while the group stops: each finishes exactly once.
    @Test(arguments: 0..<10) func stopsWhileTasksRunOnTheLoops(round: Int) async throws {
        let group = try CurlLoopGroup(loops: 2)
        let spec = TransferSpec(url: "http://127.0.0.1:1/x", schemes: ["http"], deadline: .now + .seconds(60))
        let completed = await withTaskGroup(of: Int.self) { tasks in
            for index in 0..<32 {
                tasks.addTask {
                    await group.onLoop(index) {
                        var done = 0
                        for _ in 0..<3 {
                            _ = await group.transfer(spec, writingTo: -1)
                            done += 1
                        }
                        return done == 3 ? 1 : 0
                    }
                }
                if index == 10 + round {
                    tasks.addTask {
                        group.stop()
                        return 0
                    }
                }
            }
            var count = 0
            for await finished in tasks { count += finished }
            return count
        }
        group.stop()
        #expect(completed == 32)
        #expect(group.inFlight == 0)
    }

    @Test func convertsDurationsWithoutTrapping() {
        #expect(Duration.seconds(Int64.max).saturatingMilliseconds == .max)
        #expect(Duration.seconds(Int64.min).saturatingMicroseconds == .min)
        #expect(Duration.milliseconds(1500).saturatingMilliseconds == 1500)
        #expect(Duration.microseconds(-2500).saturatingMicroseconds == -2500)
    }
}
