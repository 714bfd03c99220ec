import AssetServer
import Foundation
import TestSupport
import Testing

@testable import RichPush
@testable import RichPushServices

/// `AnalyticsFlush` against the embedded `/users/track`: batches, pacing, retries, stops, accounting.
@Suite struct AnalyticsFlushTests {
    static let key = "flush-test-key-91c2"

    /// A suite in a fresh container and a server with the endpoint.
    struct Rig {
        let folder: String
        let suite: AppGroupSuite
        let server: AssetServer

        init(limit: Int = 1000, windowSeconds: Int = 1) throws {
            folder = try Fixtures.temporaryFolder("richpush-flush")
            try FileManager.default.createDirectory(
                atPath: folder + "/app/Library/Preferences", withIntermediateDirectories: true)
            suite = try AppGroupSuite(container: folder + "/app", suite: "group.test")
            server = try AssetServer(
                root: Fixtures.assets,
                usersTrack: UsersTrackOptions(
                    apiKey: AnalyticsFlushTests.key, logPath: folder + "/track.ndjson", limit: limit,
                    windowSeconds: windowSeconds))
        }

        func stop() {
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }

        func record(events: Int, attributes: Int = 0) throws {
            var records: [PendingRecord] = (0..<events).map {
                .event(name: "tap", properties: [.init(key: "seq", value: .integer(Int64($0)))])
            }
            records += (0..<attributes).map { .customAttribute(key: "attr_\($0)", value: .integer(Int64($0))) }
            try SuiteRecorder.record(records, in: suite)
        }

        func flush(
            query: String = "", key: String = AnalyticsFlushTests.key,
            configure: (inout FlushOptions) -> Void = { _ in }
        ) async throws -> FlushSummary {
            let endpoint = try TrackEndpoint(base: server.httpBaseURL + "/" + query, apiKey: key)
            let client = try TrackClient(endpoint: endpoint)
            defer { client.stop() }
            var options = FlushOptions(user: .externalID("user-1"))
            options.backoffBase = .milliseconds(20)
            configure(&options)
            return try await AnalyticsFlush.run(suite: suite, client: client, options: options)
        }

        /// The logged lines as (array, request, object).
        func logged() throws -> [(array: String, request: Int, object: [String: Any])] {
            let text = (try? String(contentsOfFile: folder + "/track.ndjson", encoding: .utf8)) ?? ""
            return try text.split(separator: "\n").map {
                let line = try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
                return (
                    line["array"] as? String ?? "", line["request"] as? Int ?? 0,
                    line["object"] as? [String: Any] ?? [:]
                )
            }
        }

        /// The `seq` property of every logged event, in log order.
        func seqs() throws -> [Int] {
            try logged().compactMap { ($0.object["properties"] as? [String: Any])?["seq"] as? Int }
        }

        var outboxExists: Bool { FileManager.default.fileExists(atPath: suite.outboxPath) }
    }

    @Test func sendsEverythingInRequestsOfAtMost75EventsAnd75Attributes() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        try rig.record(events: 160, attributes: 80)
        let summary = try await rig.flush()
        #expect(summary.isComplete)
        #expect(summary.itemsRead == 240)
        #expect(summary.accepted == 240)
        #expect(summary.requestsSent == 3)
        let logged = try rig.logged()
        let perRequest = Dictionary(grouping: logged, by: \.request).mapValues { lines in
            (lines.filter { $0.array == "events" }.count, lines.filter { $0.array == "attributes" }.count)
        }
        #expect(perRequest.values.map(\.0).sorted() == [10, 75, 75])
        #expect(perRequest.values.map(\.1).sorted() == [0, 5, 75])
        let seqs = try rig.seqs()
        #expect(Set(seqs).count == 160 && seqs.count == 160, "every event once")
        let event = try #require(logged.first { $0.array == "events" }?.object)
        #expect(event["external_id"] as? String == "user-1")
        #expect(event["name"] as? String == "tap")
        #expect((event["time"] as? String).flatMap { ISO8601DateFormatter.withFraction.date(from: $0) } != nil)
        #expect(try rig.suite.read().entries.isEmpty)
        #expect(!rig.outboxExists, "an empty outbox is removed")
    }

    @Test func pacesRequestsUnderTheRate() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        try rig.record(events: 4 * 75)
        let started = ContinuousClock.now
        let summary = try await rig.flush { $0.requestsPerSecond = 5 }
        #expect(summary.requestsSent == 4 && summary.isComplete)
        #expect(ContinuousClock.now - started >= .milliseconds(590), "3 intervals of 200 ms at least")
    }

    @Test func aRateLimitedRequestWaitsForTheResetAndIsSentAgain() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        try rig.record(events: 3 * 75)
        // Every second request is a 429 whose X-RateLimit-Reset is the end of the current second.
        let summary = try await rig.flush(query: "?status=429&every=2")
        #expect(summary.isComplete)
        #expect(summary.retried == 2 && summary.requestsSent == 5)
        let seqs = try rig.seqs()
        #expect(seqs.count == 225 && Set(seqs).count == 225)
    }

    @Test func theEndpointsOwnLimitIsWaitedOut() async throws {
        let rig = try Rig(limit: 1, windowSeconds: 1)
        defer { rig.stop() }
        try rig.record(events: 3 * 75)
        let started = Date()
        let summary = try await rig.flush()
        #expect(summary.isComplete)
        // One request a second: three requests span two window boundaries, however they were retried.
        #expect(Int(Date().timeIntervalSince1970) - Int(started.timeIntervalSince1970) >= 2)
        #expect(summary.requestsSent == 3 + summary.retried)
        let seqs = try rig.seqs()
        #expect(seqs.count == 225 && Set(seqs).count == 225)
    }

    @Test func serverErrorsAreRetriedWithBackoff() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        try rig.record(events: 150)
        let summary = try await rig.flush(query: "?status=503&every=2")
        #expect(summary.isComplete)
        #expect(summary.retried >= 1)
        #expect(summary.unacknowledged.isEmpty, "a 503 is an answer: nothing may be duplicated")
        let seqs = try rig.seqs()
        #expect(seqs.count == 150 && Set(seqs).count == 150)
    }

    @Test func aWrongKeyStopsAtOnceAndKeepsEverythingForTheNextFlush() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        try rig.record(events: 5, attributes: 2)
        let stopped = try await rig.flush(key: "wrong-key")
        #expect(stopped.requestsSent == 1, "a 401 is never retried")
        #expect(stopped.stopped?.contains("401") == true)
        #expect(
            stopped.stopped?.contains("Invalid API key") == true, "the endpoint's message is read from the 401 body")
        #expect(stopped.leftPending == 7)
        #expect(!stopped.isComplete)
        #expect(rig.outboxExists)
        let resumed = try await rig.flush()
        #expect(resumed.resumed == 7)
        #expect(resumed.isComplete && resumed.accepted == 7)
        #expect(try rig.logged().count == 7)
    }

    @Test func itemsTheEndpointRejectsAreReportedAndKeptNotRetried() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        try rig.suite.update { root in
            root[SuiteKeys.customAttributes] = [["": "no name"], ["plan": "pro"]]
        }
        let summary = try await rig.flush()
        #expect(summary.accepted == 1)
        #expect(summary.rejected.count == 1)
        #expect(summary.rejected.first?.source == "endpoint")
        #expect(summary.leftPending == 0)
        #expect(summary.requestsSent == 1)
        let outbox = try #require(try Outbox.load(from: rig.suite.outboxPath))
        #expect(outbox.rejected.count == 1 && outbox.items.isEmpty, "kept in the outbox's rejected list")
    }

    @Test func requestsWithNoAnswerAreRetriedAndTheirItemsReportedAsMaybeDuplicated() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        try rig.record(events: 150)
        let summary = try await rig.flush(query: "?reset=0&every=2")
        #expect(summary.isComplete)
        #expect(!summary.unacknowledged.isEmpty)
        let seqs = try rig.seqs()
        #expect(Set(seqs).count == 150, "nothing lost")
        let unacknowledged = Set(
            summary.unacknowledged.compactMap { item in
                item.fields.first { $0.key == "seq" }.flatMap {
                    if case .integer(let n) = $0.value { Int(n) } else { nil }
                }
            })
        let twice = Set(Dictionary(grouping: seqs, by: { $0 }).filter { $0.value.count > 1 }.keys)
        #expect(!twice.isEmpty, "the endpoint processed the requests it then reset")
        #expect(twice.isSubset(of: unacknowledged))
    }

    @Test func anUnconfirmedClaimIsSettledFromTheSuiteMarker() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        try rig.record(events: 2)
        // A flush killed after writing its outbox and before replacing the suite: the items are in both.
        var outbox = Outbox()
        outbox.unconfirmedClaim = "lost"
        outbox.items = [
            Outbox.Item(
                id: "lost-0", claim: "lost", kind: .event, name: "tap", time: TrackBody.timestamp(),
                fields: [.init(key: "seq", value: .integer(0))])
        ]
        try outbox.save(to: rig.suite.outboxPath)
        let summary = try await rig.flush()
        #expect(summary.resumed == 0, "the claim never removed its items, so the outbox forgets them")
        #expect(summary.accepted == 2)
        let seqs = try rig.seqs()
        #expect(seqs.sorted() == [0, 1])

        // Killed after replacing the suite: the marker names the claim, so its items are the outbox's.
        try rig.suite.update { root in root[SuiteKeys.claimMarker] = "done" }
        outbox.unconfirmedClaim = "done"
        outbox.items = [
            Outbox.Item(
                id: "done-0", claim: "done", kind: .event, name: "tap", time: TrackBody.timestamp(),
                fields: [.init(key: "seq", value: .integer(7))])
        ]
        try outbox.save(to: rig.suite.outboxPath)
        let second = try await rig.flush()
        #expect(second.resumed == 1 && second.accepted == 1)
    }

    @Test func sendsOverHTTPSWithTheCAAndConnectToOfFetch() async throws {
        let folder = try Fixtures.temporaryFolder("richpush-flush-tls")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(
            atPath: folder + "/app/Library/Preferences", withIntermediateDirectories: true)
        let suite = try AppGroupSuite(container: folder + "/app", suite: "group.test")
        let server = try AssetServer(
            root: Fixtures.assets, tls: try Fixtures.tlsIdentity(),
            usersTrack: UsersTrackOptions(apiKey: Self.key, logPath: folder + "/track.ndjson"))
        defer { server.stop() }
        try SuiteRecorder.record([.email("ana@example.com")], in: suite)
        var endpoint = try TrackEndpoint(base: "https://rest.example.com", apiKey: Self.key)
        endpoint.caFile = Fixtures.caFile
        endpoint.connectTo = [
            HostMapping(
                host: "rest.example.com", port: "443", targetHost: "127.0.0.1", targetPort: "\(server.httpsPort ?? 0)")
        ]
        let client = try TrackClient(endpoint: endpoint)
        defer { client.stop() }
        let summary = try await AnalyticsFlush.run(
            suite: suite, client: client, options: FlushOptions(user: .brazeID("b-9")))
        #expect(summary.isComplete && summary.accepted == 1)
        let logged = try String(contentsOfFile: folder + "/track.ndjson", encoding: .utf8)
        #expect(logged.contains("\"email\":\"ana@example.com\"") && logged.contains("\"braze_id\":\"b-9\""))
    }

    @Test func deliveryEventsForPathAAreGroupedBy75() {
        let deliveries = (0..<160).map {
            DeliveryEvent(brazeID: "b\($0)", properties: [.init(key: "verdict", value: .string("attached"))])
        }
        let bodies = DeliveryTracking.bodies(for: deliveries)
        #expect(bodies.map(\.events.count) == [75, 75, 10])
        #expect(bodies[0].events[0]["braze_id"] == .string("b0"))
        #expect(bodies[0].events[0]["name"] == .string("rich_push_delivered"))
    }

    @Test func theEndpointMustBeHTTPSOrLocal() throws {
        #expect(throws: AnalyticsError.self) { try TrackEndpoint(base: "http://example.com", apiKey: "k") }
        #expect(throws: AnalyticsError.self) { try TrackEndpoint(base: "https://x.example", apiKey: " \n") }
        #expect(
            try TrackEndpoint(base: "https://rest.example.com/?delay=5", apiKey: "k").url
                == "https://rest.example.com/users/track?delay=5")
    }
}

extension ISO8601DateFormatter {
    fileprivate static var withFraction: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}

/// A 429's headers, hostile ones included, through the flush with a stand-in endpoint.
@Suite struct RateLimitedFlushTests {
    /// Answers the first request of each batch with a 429 carrying `headers`, the retry with a 201.
    final class Limiting: TrackSending, @unchecked Sendable {  // Sends are sequential within one flush.
        let headers: [String: String]
        var calls = 0
        init(_ headers: [String: String]) { self.headers = headers }
        func send(_ body: TrackBody) async -> TrackExchange {
            calls += 1
            if calls % 2 == 1 { return .answered(status: 429, body: [], headers: headers) }
            return .answered(status: 201, body: Array(#"{"message":"success"}"#.utf8), headers: [:])
        }
    }

    /// These values killed the flush with SIGILL; now each is ignored or clamped and the retry goes out.
    @Test(arguments: [
        "1e19", "9.3e15", "1e300", "inf", "-inf", "nan", "-5", "99999999999999999999999999",
        "9223372036854775807", "Fri, 31 Dec 9999 23:59:59 GMT", "garbage",
    ])
    func anyRateLimitHeaderValueIsSurvived(value: String) async throws {
        let folder = try Fixtures.temporaryFolder("richpush-flush-429")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(
            atPath: folder + "/Library/Preferences", withIntermediateDirectories: true)
        let suite = try AppGroupSuite(container: folder, suite: "group.test")
        for name in ["Retry-After", "X-RateLimit-Reset"] {
            try SuiteRecorder.record([.event(name: "tap", properties: [])], in: suite)
            var options = FlushOptions(user: .externalID("u1"))
            options.maxRateLimitWait = .milliseconds(20)
            options.backoffBase = .milliseconds(1)
            let summary = try await AnalyticsFlush.run(suite: suite, client: Limiting([name: value]), options: options)
            #expect(summary.isComplete && summary.retried == 1, "\(name): \(value)")
        }
    }

    @Test func anHTTPDateRetryAfterIsHonouredUpToTheCap() {
        let now = Date(timeIntervalSince1970: 1_709_294_400)
        let in30 = RateLimitHeaders.imfFixdate(epochSeconds: 1_709_294_430) ?? ""
        #expect(AnalyticsFlush.rateLimitWait(["Retry-After": in30], cap: .seconds(60), now: now) == .seconds(30))
        #expect(AnalyticsFlush.rateLimitWait(["Retry-After": in30], cap: .seconds(5), now: now) == .seconds(5))
        #expect(AnalyticsFlush.rateLimitWait(["Retry-After": "1e19"], cap: .seconds(5), now: now) == nil)
        #expect(
            AnalyticsFlush.rateLimitWait(
                ["X-RateLimit-Reset": "1709294410", "Retry-After": "1"], cap: .seconds(60), now: now)
                == .milliseconds(10_050), "the reset first, with its 50 ms")
        #expect(
            AnalyticsFlush.rateLimitWait(["X-RateLimit-Reset": "inf", "Retry-After": "2"], cap: .seconds(60), now: now)
                == .seconds(2), "an unreadable reset falls back to Retry-After")
    }
}

/// The flush carrying out its machine's decisions with a stand-in endpoint: progress lines and stops.
@Suite struct FlushProgressTests {
    /// Answers every request with `exchange`.
    struct Always: TrackSending {
        let exchange: TrackExchange
        func send(_ body: TrackBody) async -> TrackExchange { exchange }
    }

    final class Lines: @unchecked Sendable {  // Progress is called from the flush's one task.
        var lines: [String] = []
    }

    func flush(_ exchange: TrackExchange, attempts: Int) async throws -> (FlushSummary, [String]) {
        let folder = try Fixtures.temporaryFolder("richpush-flush-progress")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(
            atPath: folder + "/Library/Preferences", withIntermediateDirectories: true)
        let suite = try AppGroupSuite(container: folder, suite: "group.test")
        try SuiteRecorder.record([.event(name: "tap", properties: [])], in: suite)
        var options = FlushOptions(user: .externalID("u1"))
        options.maxAttempts = attempts
        options.backoffBase = .milliseconds(1)
        let lines = Lines()
        let summary = try await AnalyticsFlush.run(
            suite: suite, client: Always(exchange: exchange), options: options, progress: { lines.lines.append($0) })
        return (summary, lines.lines)
    }

    /// The last attempt's line says the flush gives up (it used to promise a retry that never came).
    @Test func theLastAttemptSaysNoAttemptsAreLeft() async throws {
        let (summary, lines) = try await flush(.answered(status: 503, body: [], headers: [:]), attempts: 2)
        #expect(lines == ["request 1: 503, retrying in 0.00 s", "request 2: 503, no attempts left"])
        #expect(summary.stopped == "the endpoint kept failing: gave up after 2 attempts of one request")
        #expect(summary.requestsSent == 2 && summary.retried == 1 && summary.leftPending == 1)
    }

    @Test func noAnswerOnTheLastAttemptStopsWithTheReason() async throws {
        let (summary, lines) = try await flush(
            .unanswered(reason: "connection reset", maybeDelivered: true), attempts: 1)
        #expect(lines == ["request 1: no answer (connection reset), no attempts left"])
        #expect(summary.stopped == "no answer from the endpoint after 1 attempts: connection reset")
        #expect(summary.unacknowledged.count == 1 && summary.leftPending == 1)
    }

    @Test func aRefusalStopsAtOnceWithTheEndpointsMessage() async throws {
        let body = Array(#"{"message":"Invalid API key","errors":["bad key"]}"#.utf8)
        let (summary, lines) = try await flush(.answered(status: 401, body: body, headers: [:]), attempts: 5)
        #expect(lines.isEmpty)
        #expect(summary.requestsSent == 1 && summary.retried == 0)
        #expect(
            summary.stopped?.hasPrefix("the endpoint answered 401: Invalid API key; check the REST API key") == true)
        #expect(summary.errors == ["bad key"])
    }
}
