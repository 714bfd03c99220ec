import Foundation
import Testing

@testable import RichPush
@testable import RichPushServices

/// The flush's pacing and retry decisions for every kind of answer and their sequences: no server,
/// no sleeps (time and jitter are values).
@Suite struct FlushRetryMachineTests {
    typealias Machine = FlushRetryMachine

    static let start = ContinuousClock.now
    static let date = Date(timeIntervalSince1970: 1_709_294_400)

    static func limits(attempts: Int = 4, rate: Double = 10) -> Machine.Limits {
        var options = FlushOptions(user: .externalID("u1"))
        options.maxAttempts = attempts
        options.backoffBase = .milliseconds(500)
        options.backoffCap = .seconds(3)
        options.maxRateLimitWait = .seconds(60)
        options.requestsPerSecond = rate
        return Machine.Limits(options)
    }

    /// Sends one request at `start` and records `exchange`, with the largest jitter.
    static func send(
        _ machine: inout Machine, _ exchange: Machine.Exchange, jitter: Double = 1, date: Date = date
    ) -> Machine.Decision {
        machine.started(at: start)
        return machine.record(exchange, date: date, jitter: jitter)
    }

    static let ok = Machine.Exchange.answered(status: 201, headers: [:])
    static let unavailable = Machine.Exchange.answered(status: 503, headers: [:])
    static let limited = Machine.Exchange.answered(status: 429, headers: [:])
    static let lost = Machine.Exchange.unanswered(maybeDelivered: true)
    static let neverLeft = Machine.Exchange.unanswered(maybeDelivered: false)

    @Test func theFirstRequestGoesAtOnceAndTheNextKeepsToTheRate() {
        var machine = Machine(Self.limits(rate: 10))
        #expect(machine.begin(now: Self.start, cancelled: false) == .send(notBefore: nil))
        machine.started(at: Self.start)
        #expect(
            machine.begin(now: Self.start + .milliseconds(30), cancelled: false)
                == .send(notBefore: Self.start + .milliseconds(100)))
        #expect(machine.begin(now: Self.start + .milliseconds(100), cancelled: false) == .send(notBefore: nil))
        #expect(machine.begin(now: Self.start + .seconds(5), cancelled: false) == .send(notBefore: nil))
    }

    @Test func anInterruptedFlushSendsNothingMore() {
        var machine = Machine(Self.limits())
        #expect(machine.begin(now: Self.start, cancelled: true) == .interrupted)
        _ = Self.send(&machine, Self.unavailable)
        #expect(machine.begin(now: Self.start + .seconds(9), cancelled: true) == .interrupted)
    }

    /// Every status class, on a first attempt: what happens to the items and what comes next.
    @Test(arguments: [
        (200, Machine.Decision(mark: .acknowledged, next: .nextBatch)),
        (201, Machine.Decision(mark: .acknowledged, next: .nextBatch)),
        (299, Machine.Decision(mark: .acknowledged, next: .nextBatch)),
        (429, Machine.Decision(mark: .unsent, next: .retry(after: .milliseconds(500), because: .rateLimited))),
        (
            500,
            Machine.Decision(mark: .unsent, next: .retry(after: .milliseconds(500), because: .serverError(status: 500)))
        ),
        (
            503,
            Machine.Decision(mark: .unsent, next: .retry(after: .milliseconds(500), because: .serverError(status: 503)))
        ),
        (
            599,
            Machine.Decision(mark: .unsent, next: .retry(after: .milliseconds(500), because: .serverError(status: 599)))
        ),
        (400, Machine.Decision(mark: .unsent, next: .stop(.refused(status: 400)))),
        (401, Machine.Decision(mark: .unsent, next: .stop(.refused(status: 401)))),
        (403, Machine.Decision(mark: .unsent, next: .stop(.refused(status: 403)))),
        (404, Machine.Decision(mark: .unsent, next: .stop(.refused(status: 404)))),
        (100, Machine.Decision(mark: .unsent, next: .stop(.refused(status: 100)))),
        (302, Machine.Decision(mark: .unsent, next: .stop(.refused(status: 302)))),
    ])
    func eachStatusOnTheFirstAttempt(status: Int, expected: Machine.Decision) {
        var machine = Machine(Self.limits())
        #expect(Self.send(&machine, .answered(status: status, headers: [:])) == expected)
    }

    @Test func noAnswerIsRetriedAndMarksTheItemsByWhetherTheRequestLeft() {
        var machine = Machine(Self.limits())
        #expect(
            Self.send(&machine, Self.lost)
                == .init(mark: .unacknowledged, next: .retry(after: .milliseconds(500), because: .noAnswer)))
        #expect(
            Self.send(&machine, Self.neverLeft)
                == .init(mark: .unsent, next: .retry(after: .seconds(1), because: .noAnswer)))
    }

    @Test func theBackoffDoublesWithEachAttemptUpToTheCapAndTheJitterScalesIt() {
        var machine = Machine(Self.limits(attempts: 8))
        let waits = (0..<7).map { _ -> Duration? in
            if case .retry(let wait, _) = Self.send(&machine, Self.unavailable).next { return wait }
            return nil
        }
        #expect(
            waits == [
                .milliseconds(500), .seconds(1), .seconds(2), .seconds(3), .seconds(3), .seconds(3), .seconds(3),
            ])
        let limits = Self.limits()
        #expect(Machine.backoff(attempt: 2, limits: limits, jitter: 0.5) == .milliseconds(500))
        #expect(Machine.backoff(attempt: 0, limits: limits, jitter: 1) == .milliseconds(500), "attempt 0 is the first")
        #expect(Machine.backoff(attempt: 10_000, limits: limits, jitter: 1) == .seconds(3), "no overflow")
        #expect(Machine.backoff(attempt: 1, limits: limits, jitter: 7) == .milliseconds(500), "jitter at most 1")
    }

    /// A 429 waits what its headers ask (capped); without readable headers, the backoff.
    @Test func aRateLimitedRequestWaitsForItsHeaders() {
        let cases: [([String: String], Duration)] = [
            (["Retry-After": "7"], .seconds(7)),
            (["Retry-After": "600"], .seconds(60)),
            (["X-RateLimit-Reset": "1709294410", "Retry-After": "1"], .milliseconds(10_050)),
            (["X-RateLimit-Reset": "1709294399"], .milliseconds(50)),
            (["X-RateLimit-Reset": "inf", "Retry-After": "2"], .seconds(2)),
            (["Retry-After": "1e19"], .milliseconds(250)),
            ([:], .milliseconds(250)),
        ]
        for (headers, wait) in cases {
            var machine = Machine(Self.limits())
            #expect(
                Self.send(&machine, .answered(status: 429, headers: headers), jitter: 0.5)
                    == .init(mark: .unsent, next: .retry(after: wait, because: .rateLimited)), "\(headers)")
        }
    }

    /// The last allowed attempt stops the flush, with the reason of the last failure.
    @Test(arguments: [
        (
            FlushRetryMachine.Exchange.answered(status: 503, headers: [:]),
            FlushRetryMachine.Stop.keptFailing(attempts: 3)
        ),
        (.answered(status: 429, headers: ["Retry-After": "1"]), .keptFailing(attempts: 3)),
        (.unanswered(maybeDelivered: true), .noAnswer(attempts: 3)),
        (.unanswered(maybeDelivered: false), .noAnswer(attempts: 3)),
    ])
    func theLastAttemptStops(last: Machine.Exchange, stop: Machine.Stop) {
        var machine = Machine(Self.limits(attempts: 3))
        #expect(Self.send(&machine, Self.unavailable).next != .stop(stop))
        #expect(Self.send(&machine, Self.lost).next != .stop(stop))
        let decision = Self.send(&machine, last)
        #expect(decision.next == .stop(stop))
        #expect(decision.mark == (last == Self.lost ? .unacknowledged : .unsent), "the items stay in the outbox")
    }

    @Test func oneAttemptAllowedStopsOnTheFirstFailure() {
        var machine = Machine(Self.limits(attempts: 1))
        #expect(Self.send(&machine, Self.limited).next == .stop(.keptFailing(attempts: 1)))
    }

    /// A 2xx starts the next batch with all its attempts and the first backoff again.
    @Test func aSuccessResetsTheAttempts() {
        var machine = Machine(Self.limits(attempts: 2))
        _ = Self.send(&machine, Self.unavailable)
        #expect(Self.send(&machine, Self.ok) == .init(mark: .acknowledged, next: .nextBatch))
        #expect(machine.attempts == 0)
        #expect(
            Self.send(&machine, Self.unavailable).next
                == .retry(after: .milliseconds(500), because: .serverError(status: 503)))
        #expect(Self.send(&machine, Self.unavailable).next == .stop(.keptFailing(attempts: 2)))
    }

    /// Every sequence of three outcomes (of six kinds) for one batch with three attempts: the
    /// decision is the one a flush must take given what came before, and nothing follows a stop.
    @Test func everySequenceOfOutcomesForOneBatch() {
        let kinds: [Machine.Exchange] = [
            Self.ok, Self.unavailable, Self.limited, .answered(status: 401, headers: [:]), Self.lost, Self.neverLeft,
        ]
        for first in kinds {
            for second in kinds {
                for third in kinds {
                    var machine = Machine(Self.limits(attempts: 3))
                    var failures = 0
                    var stopped = false
                    for exchange in [first, second, third] {
                        let decision = Self.send(&machine, exchange, jitter: 1)
                        let label = "\([first, second, third])"
                        switch exchange {
                        case Self.ok:
                            failures = 0
                            #expect(decision == .init(mark: .acknowledged, next: .nextBatch), "\(label)")
                        case .answered(401, _):
                            #expect(decision.next == .stop(.refused(status: 401)), "\(label)")
                            stopped = true
                        default:
                            failures += 1
                            let noAnswer = exchange == Self.lost || exchange == Self.neverLeft
                            if failures == 3 {
                                #expect(
                                    decision.next
                                        == .stop(noAnswer ? .noAnswer(attempts: 3) : .keptFailing(attempts: 3)),
                                    "\(label)")
                                stopped = true
                            } else {
                                guard case .retry(let wait, _) = decision.next else {
                                    Issue.record("\(label): \(decision)")
                                    continue
                                }
                                #expect(wait == .milliseconds(500) * (1 << (failures - 1)), "\(label)")
                            }
                        }
                        #expect(decision.mark != .acknowledged || exchange == Self.ok, "\(label)")
                        if stopped { break }
                    }
                }
            }
        }
    }
}
