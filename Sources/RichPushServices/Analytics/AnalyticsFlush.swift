import Foundation
import RichPush

/// Sends `/users/track` requests; ``TrackClient`` over libcurl, or a stand-in in tests.
package protocol TrackSending: Sendable {
    func send(_ body: TrackBody) async -> TrackExchange
}

extension TrackClient: TrackSending {}

/// How a flush paces and retries.
package struct FlushOptions: Sendable {
    /// Who the items are about.
    package var user: UserIdentifier
    /// Requests started per second at most (Braze's base limit is 3,000 per 3 seconds).
    package var requestsPerSecond: Double = 1000
    /// Requests for one batch at most (the first and the retries) before the flush gives up.
    package var maxAttempts = 6
    /// The first retry waits about this long; each further one twice as long, with jitter.
    package var backoffBase: Duration = .milliseconds(500)
    /// No backoff is longer than this.
    package var backoffCap: Duration = .seconds(30)
    /// The longest wait a 429's `X-RateLimit-Reset` or `Retry-After` may ask for.
    package var maxRateLimitWait: Duration = .seconds(60)

    package init(user: UserIdentifier) { self.user = user }
}

/// An item that was not delivered because it is invalid: the endpoint said so, or the suite entry
/// has a defect (it then stays in the suite).
package struct RejectedItem: Sendable, Codable, Equatable {
    package var kind: SuiteEntry.Kind
    package var name: String?
    package var fields: [SuiteEntry.Field]
    /// `endpoint` (kept in the outbox's rejected list) or `suite` (left in the suite).
    package var source: String
    package var reason: String
}

/// What a flush did.
package struct FlushSummary: Sendable, Codable {
    /// Items this flush took on: read from the suite now (defective ones included), plus those an
    /// earlier flush left in the outbox.
    package var itemsRead = 0
    /// Of those, how many an earlier flush had claimed.
    package var resumed = 0
    package var requestsSent = 0
    /// Items the endpoint accepted.
    package var accepted = 0
    /// Requests sent again after a 429, a 5xx or no answer.
    package var retried = 0
    package var rejected: [RejectedItem] = []
    /// Items still in the outbox (or the suite) when the flush ended.
    package var leftPending = 0
    /// Items that were in a request whose answer never arrived (in this flush, or in an earlier one
    /// whose summary was never shown): the endpoint may have them twice.
    package var unacknowledged: [Outbox.Item] = []
    /// Why the flush stopped before the outbox was empty, if it did.
    package var stopped: String?
    /// The endpoint's `errors` for the request that stopped the flush.
    package var errors: [String] = []

    package init() {}

    /// Whether everything read was delivered and nothing was rejected.
    package var isComplete: Bool { leftPending == 0 && rejected.isEmpty && stopped == nil }
}

/// The app's next launch: every pending item of a suite sent to `/users/track`, nothing lost and
/// nothing sent twice by richpush itself.
///
/// Items move from the suite to the outbox under the suite's lock: the outbox is written first with
/// the claim marked unconfirmed, then the suite is replaced without the items and with the claim id
/// in ``SuiteKeys/claimMarker``, so a flush killed between the two knows from the suite whether the
/// removal happened. Items leave the outbox only after a 2xx; they are marked sending before each
/// request, so a resumed flush can say which ones may have reached the endpoint already.
///
/// ```swift
/// let client = try TrackClient(endpoint: try TrackEndpoint(base: url, apiKey: key))
/// defer { client.stop() }
/// let summary = try await AnalyticsFlush.run(suite: suite, client: client, options: FlushOptions(user: .externalID("u1")))
/// ```
package enum AnalyticsFlush {
    /// Claims, sends and accounts; throws only when the suite or outbox cannot be read or written.
    package static func run(
        suite: AppGroupSuite, client: some TrackSending, options: FlushOptions,
        progress: @Sendable (String) -> Void = { _ in }
    ) async throws(AnalyticsError) -> FlushSummary {
        try await run(suite: suite, client: client, options: options, progress: progress, observe: { _ in })
    }

    /// ``run(suite:client:options:progress:)``, with `observe` called with the outbox log before each
    /// request and once at the end (tests count its bytes).
    static func run(
        suite: AppGroupSuite, client: some TrackSending, options: FlushOptions,
        progress: @Sendable (String) -> Void, observe: (OutboxLog) -> Void
    ) async throws(AnalyticsError) -> FlushSummary {
        let flushLock = try FileLock(path: suite.flushLockPath, wait: false)
        defer { flushLock.release() }
        var summary = FlushSummary()
        let log = try claim(suite: suite, summary: &summary)
        // The machine decides (pacing, retries, stops); this loop sends, sleeps and writes the outbox.
        var machine = FlushRetryMachine(FlushRetryMachine.Limits(options))
        while let batch = nextBatch(log.outbox) {
            guard case .send(let notBefore) = machine.begin(now: .now, cancelled: Task.isCancelled) else {
                summary.stopped = "interrupted; the rest stays in the outbox for the next flush"
                break
            }
            let events = batch.events.map { log.outbox.items[$0] }
            let attributes = batch.attributes.map { log.outbox.items[$0] }
            let members = (events + attributes).map(\.id)
            observe(log)
            try log.append(.sending(ids: members))
            if let notBefore { try? await Task.sleep(until: notBefore, clock: .continuous) }
            machine.started(at: .now)
            let body = TrackBody(
                events: events.map { object($0, user: options.user) },
                attributes: attributes.map { object($0, user: options.user) })
            summary.requestsSent += 1
            let exchange = await client.send(body)
            let decision = machine.record(
                FlushRetryMachine.Exchange(exchange), date: Date(), jitter: Double.random(in: 0.5...1))
            switch decision.mark {
            case .acknowledged:
                guard case .answered(let status, let bytes, _) = exchange else { break }
                let refused = nonFatalErrors(bytes, events: events.map(\.id), attributes: attributes.map(\.id))
                let byID = Dictionary((events + attributes).map { ($0.id, $0) }) { first, _ in first }
                let refusals = refused.sorted {
                    members.firstIndex(of: $0.key) ?? 0 < members.firstIndex(of: $1.key) ?? 0
                }
                for (id, reason) in refusals {
                    if let item = byID[id] {
                        summary.rejected.append(rejectedItem(item, source: "endpoint", reason: reason))
                    }
                }
                try log.append(
                    .acknowledged(
                        ids: members, rejected: refusals.map { OutboxChange.Refusal(id: $0.key, reason: $0.value) }))
                summary.accepted += members.count - refused.count
                progress("request \(summary.requestsSent): \(status), \(members.count - refused.count) accepted")
            case .unsent:
                try log.append(.unsent(ids: members))
            case .unacknowledged:
                // Maybe delivered: they stay marked sending, and the warning is kept until a summary shows it.
                try log.append(.unacknowledged(ids: members))
            }
            let line = "request \(summary.requestsSent): " + outcomeText(exchange)
            switch decision.next {
            case .nextBatch:
                continue
            case .retry(let wait, let because):
                progress(line + (because == .rateLimited ? ", waiting " : ", retrying in ") + describe(wait))
                summary.retried += 1
                try? await Task.sleep(for: wait)
            case .stop(let stop):
                if case .refused(let status) = stop, case .answered(_, let bytes, _) = exchange {
                    let (message, errors) = fatalMessage(bytes)
                    summary.stopped = "the endpoint answered \(status): \(message)" + advice(status)
                    summary.errors = errors
                } else {
                    progress(line + ", no attempts left")
                    summary.stopped = stopText(stop, exchange: exchange)
                }
            }
            if summary.stopped != nil { break }
        }
        summary.leftPending = log.outbox.items.count
        summary.unacknowledged = log.outbox.unreported
        try log.finish()
        observe(log)
        return summary
    }

    /// Forgets the unacknowledged items a summary reported, once the caller has shown it: until
    /// then every flush reports them again, so a flush killed before its summary loses no warning.
    package static func markReported(_ summary: FlushSummary, suite: AppGroupSuite) throws(AnalyticsError) {
        guard !summary.unacknowledged.isEmpty else { return }
        let flushLock = try FileLock(path: suite.flushLockPath, wait: false)
        defer { flushLock.release() }
        let log = try OutboxLog.open(suite.outboxPath)
        guard !log.outbox.isEmpty else { return }
        try log.append(.reported(ids: summary.unacknowledged.map(\.id)))
        try log.finish()
    }

    /// Moves every sendable entry of the suite into the outbox (see the type's summary), after settling
    /// what an earlier flush left: an unconfirmed claim, and items marked sending.
    static func claim(suite: AppGroupSuite, summary: inout FlushSummary) throws(AnalyticsError) -> OutboxLog {
        let log = try OutboxLog.open(suite.outboxPath)
        let claimID = randomID()
        let time = TrackBody.timestamp()
        var claimed = 0
        var local: [RejectedItem] = []
        do {
            try suite.update { root throws(AnalyticsError) in
                if let earlier = log.outbox.unconfirmedClaim {
                    // The replace that removed its items either happened (the marker is there) or not.
                    let removed = root[SuiteKeys.claimMarker] as? String == earlier
                    try log.append(removed ? .confirmed(claim: earlier) : .dropped(claim: earlier))
                }
                let snapshot = SuiteSnapshot(root: root)
                var removals: [String: Set<Int>] = [:]
                var items: [Outbox.Item] = []
                for entry in snapshot.entries {
                    guard entry.isSendable else {
                        local.append(
                            RejectedItem(
                                kind: entry.kind, name: entry.name, fields: entry.fields, source: "suite",
                                reason: entry.defects.map(\.message).joined(separator: "; ") + " (left in the suite)"))
                        continue
                    }
                    items.append(
                        Outbox.Item(
                            id: claimID + "-" + String(items.count), claim: claimID, kind: entry.kind, name: entry.name,
                            time: entry.kind == .event ? time : nil, fields: entry.fields))
                    removals[entry.suiteKey, default: []].insert(entry.index)
                }
                claimed = items.count
                guard !items.isEmpty else { return }
                try log.append(.queued(claim: claimID, items: items))
                for (key, indices) in removals {
                    guard let array = root[key] as? [Any] else { continue }
                    let kept = array.enumerated().filter { !indices.contains($0.offset) }.map(\.element)
                    if kept.isEmpty { root[key] = nil } else { root[key] = kept }
                }
                root[SuiteKeys.claimMarker] = claimID
            }
        } catch {
            if log.outbox.unconfirmedClaim == claimID {
                // The suite was not replaced: its items are still there, so the outbox must forget them.
                try? log.append(.dropped(claim: claimID))
            }
            throw error
        }
        if log.outbox.unconfirmedClaim == claimID { try log.append(.confirmed(claim: claimID)) }
        summary.resumed = log.outbox.items.count - claimed
        summary.itemsRead = log.outbox.items.count + local.count
        summary.rejected = local
        // Items an earlier flush had in a request with no answer: they may be at the endpoint already.
        let wasSending = log.outbox.items.filter(\.sending).map(\.id)
        if !wasSending.isEmpty {
            try log.append(.unacknowledged(ids: wasSending))
            try log.append(.unsent(ids: wasSending))
        }
        return log
    }

    /// The indices of the next request's items: the first 75 events and 75 attribute items, in order.
    static func nextBatch(_ outbox: Outbox) -> (events: [Int], attributes: [Int])? {
        var events: [Int] = []
        var attributes: [Int] = []
        for (index, item) in outbox.items.enumerated() {
            if item.kind == .event {
                if events.count < TrackBody.limit { events.append(index) }
            } else if attributes.count < TrackBody.limit {
                attributes.append(index)
            }
            if events.count == TrackBody.limit && attributes.count == TrackBody.limit { break }
        }
        return events.isEmpty && attributes.isEmpty ? nil : (events, attributes)
    }

    /// The REST object for an outbox item.
    static func object(_ item: Outbox.Item, user: UserIdentifier) -> JSONValue {
        switch item.kind {
        case .event:
            return TrackBody.event(
                name: item.name ?? "", time: item.time ?? TrackBody.timestamp(), properties: item.fields, user: user)
        case .customAttribute, .userAttribute:
            return TrackBody.attributes(item.fields, user: user)
        }
    }

    /// The items a 2xx answer's `errors` name (``TrackResponse/refusals``), with the reason.
    static func nonFatalErrors(_ bytes: [UInt8], events: [String], attributes: [String]) -> [String: String] {
        var refused: [String: String] = [:]
        for refusal in TrackResponse(body: bytes).refusals {
            let list = refusal.array == "events" ? events : refusal.array == "attributes" ? attributes : []
            if list.indices.contains(refusal.index) { refused[list[refusal.index]] = refusal.reason }
        }
        return refused
    }

    /// The `message` and `errors` of a fatal answer, as text (never longer than a few hundred bytes each).
    static func fatalMessage(_ bytes: [UInt8]) -> (String, [String]) {
        guard (try? JSONValue.parse(bytes)) != nil else { return ("(no JSON message)", []) }
        let response = TrackResponse(body: bytes)
        return (response.message ?? "(no message)", response.errors)
    }

    private static func advice(_ status: Int) -> String {
        switch status {
        case 401: return "; check the REST API key (\(Setting.apiKeyFile) or BRAZE_REST_API_KEY)"
        case 403: return "; the REST API key needs the users.track permission"
        case 400: return "; the request was not retried (sending it unchanged would fail again)"
        default: return ""
        }
    }

    /// How long a 429 asks to wait (``FlushRetryMachine/rateLimitWait(_:cap:now:)``).
    static func rateLimitWait(_ headers: [String: String], cap: Duration, now: Date = Date()) -> Duration? {
        FlushRetryMachine.rateLimitWait(headers, cap: cap, now: now)
    }

    /// The status, or `no answer (REASON)`, for a request's progress line.
    private static func outcomeText(_ exchange: TrackExchange) -> String {
        switch exchange {
        case .answered(let status, _, _): "\(status)"
        case .unanswered(let reason, _): "no answer (\(reason))"
        }
    }

    /// Why the flush gave up on a batch after its last attempt.
    private static func stopText(_ stop: FlushRetryMachine.Stop, exchange: TrackExchange) -> String {
        switch stop {
        case .refused(let status): "the endpoint answered \(status)"
        case .noAnswer(let attempts):
            if case .unanswered(let reason, _) = exchange {
                "no answer from the endpoint after \(attempts) attempts: \(reason)"
            } else {
                "no answer from the endpoint after \(attempts) attempts"
            }
        case .keptFailing(let attempts): "the endpoint kept failing: gave up after \(attempts) attempts of one request"
        }
    }

    private static func rejectedItem(_ item: Outbox.Item, source: String, reason: String) -> RejectedItem {
        RejectedItem(kind: item.kind, name: item.name, fields: item.fields, source: source, reason: reason)
    }

    private static func describe(_ duration: Duration) -> String {
        String(format: "%.2f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    private static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next() as UInt64, radix: 36)
    }
}
