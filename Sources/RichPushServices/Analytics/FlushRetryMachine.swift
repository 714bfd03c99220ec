import Foundation
import RichPush

/// The pacing and retry decisions of ``AnalyticsFlush``, as a plain value with no I/O and no clock.
///
/// The flush calls ``begin(now:cancelled:)`` before each request (may it go, and not before when),
/// ``started(at:)`` when it goes, and ``record(_:date:jitter:)`` with what came back; the machine
/// answers with what to do to the batch's items in the outbox and what comes next: the next batch,
/// the same batch again after a wait, or a stop with its reason. Time and the backoff's jitter come
/// in as values, so tests walk every sequence of answers without a server or a sleep.
///
/// ```swift
/// var machine = FlushRetryMachine(FlushRetryMachine.Limits(options))
/// if case .send(let notBefore) = machine.begin(now: .now, cancelled: Task.isCancelled) { ... }
/// machine.started(at: .now)
/// let decision = machine.record(.answered(status: 503, headers: [:]), date: Date(), jitter: 0.75)
/// ```
struct FlushRetryMachine: Sendable, Equatable {
    /// The bounds a flush runs within (from ``FlushOptions``).
    struct Limits: Sendable, Equatable {
        /// Requests for one batch at most (the first and the retries).
        var maxAttempts: Int
        /// The first backoff's ceiling; each further one doubles it.
        var backoffBase: Duration
        /// No backoff is longer than this.
        var backoffCap: Duration
        /// The longest wait a 429's headers may ask for.
        var maxRateLimitWait: Duration
        /// The least time between two request starts.
        var interval: Duration

        init(_ options: FlushOptions) {
            maxAttempts = options.maxAttempts
            backoffBase = options.backoffBase
            backoffCap = options.backoffCap
            maxRateLimitWait = options.maxRateLimitWait
            interval = .seconds(1 / max(options.requestsPerSecond, 0.001))
        }
    }

    /// What one request came to, as far as retrying is concerned.
    enum Exchange: Sendable, Equatable {
        /// The endpoint answered with `status`; `headers` are the rate-limit ones.
        case answered(status: Int, headers: [String: String])
        /// No answer; `maybeDelivered` is false only when the request surely never left.
        case unanswered(maybeDelivered: Bool)

        init(_ exchange: TrackExchange) {
            switch exchange {
            case .answered(let status, _, let headers): self = .answered(status: status, headers: headers)
            case .unanswered(_, let maybeDelivered): self = .unanswered(maybeDelivered: maybeDelivered)
            }
        }
    }

    /// Whether the next request may go.
    enum Begin: Sendable, Equatable {
        /// The flush was interrupted: stop, the items stay in the outbox for the next flush.
        case interrupted
        /// Send it, once `notBefore` has passed (nil: at once), to keep under the request rate.
        case send(notBefore: ContinuousClock.Instant?)
    }

    /// What becomes of the request's items in the outbox.
    enum Mark: Sendable, Equatable {
        /// Delivered (or refused one by one in a 2xx's `errors`): they leave the outbox.
        case acknowledged
        /// Surely not processed: they stay, to be sent again.
        case unsent
        /// Maybe processed (no answer): they stay, and are reported as possibly sent twice.
        case unacknowledged
    }

    /// Why the same batch goes again.
    enum Retry: Sendable, Equatable {
        /// A 429: the wait its headers ask for (capped), or else the backoff.
        case rateLimited
        /// A 5xx: the backoff.
        case serverError(status: Int)
        /// No answer: the backoff.
        case noAnswer
    }

    /// Why the flush stops with items left in the outbox.
    enum Stop: Sendable, Equatable {
        /// An answer that sending the same request again cannot change (4xx other than 429, 1xx, 3xx).
        case refused(status: Int)
        /// The last allowed attempt got no answer.
        case noAnswer(attempts: Int)
        /// The last allowed attempt got a 429 or a 5xx.
        case keptFailing(attempts: Int)
    }

    /// What the flush does after a request.
    enum Next: Sendable, Equatable {
        /// Send the next batch (the outbox decides whether there is one).
        case nextBatch
        /// Wait `after`, then send the same batch again.
        case retry(after: Duration, because: Retry)
        /// Stop, leaving what is still in the outbox for the next flush.
        case stop(Stop)
    }

    /// The outbox change and the next step for one request's outcome.
    struct Decision: Sendable, Equatable {
        var mark: Mark
        var next: Next
    }

    let limits: Limits
    /// Requests sent for the current batch, the first included.
    private(set) var attempts = 0
    /// When the last request started.
    private(set) var lastStart: ContinuousClock.Instant?

    init(_ limits: Limits) { self.limits = limits }

    /// Whether the next request may go, and from when.
    func begin(now: ContinuousClock.Instant, cancelled: Bool) -> Begin {
        if cancelled { return .interrupted }
        guard let lastStart, now < lastStart + limits.interval else { return .send(notBefore: nil) }
        return .send(notBefore: lastStart + limits.interval)
    }

    /// The request started at `now`.
    mutating func started(at now: ContinuousClock.Instant) {
        lastStart = now
        attempts += 1
    }

    /// What to do after `exchange`: `date` is the wall clock (for `X-RateLimit-Reset` and HTTP-dates),
    /// `jitter` the backoff's fraction of its ceiling, between 0.5 and 1.
    mutating func record(_ exchange: Exchange, date: Date, jitter: Double) -> Decision {
        switch exchange {
        case .answered(let status, _) where (200..<300).contains(status):
            attempts = 0
            return Decision(mark: .acknowledged, next: .nextBatch)
        case .answered(429, let headers):
            let wait =
                Self.rateLimitWait(headers, cap: limits.maxRateLimitWait, now: date) ?? backoff(jitter: jitter)
            return Decision(mark: .unsent, next: retryOrStop(.retry(after: wait, because: .rateLimited)))
        case .answered(let status, _) where status >= 500:
            return Decision(
                mark: .unsent,
                next: retryOrStop(.retry(after: backoff(jitter: jitter), because: .serverError(status: status))))
        case .answered(let status, _):
            return Decision(mark: .unsent, next: .stop(.refused(status: status)))
        case .unanswered(let maybeDelivered):
            return Decision(
                mark: maybeDelivered ? .unacknowledged : .unsent,
                next: retryOrStop(.retry(after: backoff(jitter: jitter), because: .noAnswer)))
        }
    }

    /// `retry`, unless the batch has had its last attempt.
    private func retryOrStop(_ retry: Next) -> Next {
        guard attempts >= limits.maxAttempts, case .retry(_, let because) = retry else { return retry }
        return .stop(because == .noAnswer ? .noAnswer(attempts: attempts) : .keptFailing(attempts: attempts))
    }

    /// Exponential backoff: attempt n waits `jitter` x base x 2^(n-1), the ceiling capped.
    private func backoff(jitter: Double) -> Duration {
        Self.backoff(attempt: attempts, limits: limits, jitter: jitter)
    }

    /// Attempt n's backoff: `jitter` (0.5 to 1) of base x 2^(n-1), the ceiling capped at the limit.
    static func backoff(attempt: Int, limits: Limits, jitter: Double) -> Duration {
        let exponent = Double(min(max(attempt - 1, 0), 30))
        let ceiling = min(limits.backoffBase * pow(2, exponent), limits.backoffCap)
        return ceiling * min(max(jitter, 0.5), 1)
    }

    /// How long a 429 asks to wait, at most `cap`: `X-RateLimit-Reset` (epoch seconds, plus 50 ms so
    /// the window has surely turned) or else `Retry-After` (seconds or an HTTP-date); nil when neither
    /// is there or readable (``RateLimitHeaders`` ignores what its grammar does not allow).
    static func rateLimitWait(_ headers: [String: String], cap: Duration, now: Date) -> Duration? {
        let reset = headers["X-RateLimit-Reset"].flatMap { RateLimitHeaders.rateLimitReset($0, now: now) }
        let wait =
            reset.map { $0 + .milliseconds(50) }
            ?? headers["Retry-After"].flatMap {
                RateLimitHeaders.retryAfter($0, now: now)
            }
        return wait.map { min($0, cap) }
    }
}
