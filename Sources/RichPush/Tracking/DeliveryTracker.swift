import Foundation
import Synchronization

/// Path A: the emulated service extension logs a delivery event for each payload through
/// `/users/track`, for the user named by the payload's top-level `braze_id`.
///
/// Events are collected as verdicts arrive and sent after them, in requests of at most 75, so a
/// tracking call never delays a verdict; what it came to is reported on its own (``Report``).
/// Sending them all gets one time budget, the run's (the extension's budget): a slow
/// endpoint holds the command's exit that long at most, and the events it did not answer in time
/// count as failed.
///
/// ```swift
/// let tracker = try DeliveryTracker(endpoint: endpoint)
/// tracker.record(outcome, payload: root)      // once per payload
/// let report = await tracker.flush(within: .seconds(30))  // after the verdicts
/// tracker.stop()
/// ```
package final class DeliveryTracker: Sendable {
    /// What the tracking calls came to.
    package struct Report: Sendable, Codable, Equatable {
        /// Delivery events recorded (payloads with a `braze_id`).
        package var events = 0
        /// Payloads without a top-level string `braze_id`: a warning each, no request.
        package var missingBrazeID = 0
        package var requests = 0
        /// Events the endpoint accepted (2xx, less its non-fatal errors).
        package var accepted = 0
        /// Events in requests that failed (no answer, or a status other than 2xx).
        package var failed = 0
        /// The last failure, for people (never contains the API key).
        package var lastError: String?

        enum CodingKeys: String, CodingKey {
            case events, requests, accepted, failed
            case missingBrazeID = "missing_braze_id"
            case lastError = "last_error"
        }

        package init() {}

        /// One line for stderr.
        package var summaryLine: String {
            var line =
                "tracking: \(events) delivery event(s) in \(requests) request(s), \(accepted) accepted, \(failed) failed"
            if missingBrazeID > 0 { line += "; \(missingBrazeID) payload(s) without braze_id (no event)" }
            if let lastError { line += "; last error: \(lastError)" }
            return line
        }
    }

    private let client: TrackClient
    private let eventName: String
    private let pending = Mutex<(events: [DeliveryEvent], missing: Int)>(([], 0))

    package init(endpoint: TrackEndpoint, eventName: String = DeliveryTracking.defaultEventName)
        throws(AnalyticsError)
    {
        client = try TrackClient(endpoint: endpoint)
        self.eventName = eventName
    }

    /// Stops the HTTP client; idempotent.
    package func stop() { client.stop() }

    /// The warning a payload without `braze_id` gets.
    package static let missingBrazeIDWarning = Warning(
        "tracking-no-braze-id",
        "the payload has no top-level string 'braze_id', so no delivery event can be logged for its user: "
            + "add braze_id to the campaign's key-value pairs (Liquid: {{${braze_id}}})")

    /// Records the delivery event of one payload; returns false (and counts it) when it has no `braze_id`.
    @discardableResult
    package func record(_ outcome: Outcome, payload root: JSONValue?) -> Bool {
        guard case .string(let brazeID)? = root?["braze_id"], !brazeID.isEmpty else {
            pending.withLock { $0.missing += 1 }
            return false
        }
        var properties: [TrackField] = [
            TrackField(key: "verdict", value: .string(outcome.verdict.rawValue)),
            TrackField(key: "reason", value: .string(outcome.reason.rawValue)),
            TrackField(key: "elapsed_ms", value: .integer(Int64(outcome.elapsedMilliseconds.rounded()))),
        ]
        if let attachment = outcome.attachment {
            properties.append(TrackField(key: "attachment_type", value: .string(attachment.type)))
            properties.append(TrackField(key: "attachment_bytes", value: .integer(attachment.bytes)))
        }
        let event = DeliveryEvent(brazeID: brazeID, properties: properties)
        pending.withLock { $0.events.append(event) }
        return true
    }

    /// Sends every recorded event, 75 to a request, all within `budget` from now, and says what came of it.
    package func flush(within budget: Duration) async -> Report {
        let deadline = ContinuousClock.now + budget
        let (events, missing) = pending.withLock { state in
            defer { state = ([], 0) }
            return state
        }
        var report = Report()
        report.events = events.count
        report.missingBrazeID = missing
        for body in DeliveryTracking.bodies(for: events, eventName: eventName) {
            report.requests += 1
            let count = body.events.count
            guard ContinuousClock.now < deadline else {
                report.failed += count
                report.lastError = "not sent: the tracking budget (\(budget)) ran out"
                continue
            }
            switch await client.send(body, deadline: deadline) {
            case .answered(let status, let answer, _) where (200..<300).contains(status):
                let refused = min(count, TrackResponse(body: answer).errorCount)
                report.accepted += count - refused
                report.failed += refused
            case .answered(let status, let answer, _):
                report.failed += count
                report.lastError = "HTTP \(status)" + (TrackResponse(body: answer).message.map { ": \($0)" } ?? "")
            case .unanswered(let reason, _):
                report.failed += count
                report.lastError = reason
            }
        }
        return report
    }
}
