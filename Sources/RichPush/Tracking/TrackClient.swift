import CurlKit
import Foundation

/// What one `/users/track` request came to.
package enum TrackExchange: Sendable {
    /// The endpoint answered: its status, the body (up to 1 MiB), and the rate-limit headers, each
    /// with the API key removed (``SecretRedaction``).
    case answered(status: Int, body: [UInt8], headers: [String: String])
    /// No answer arrived (`reason` has the API key removed too). `maybeDelivered` is false only when the request surely never left (the
    /// connection was never set up); otherwise the endpoint may have processed it.
    case unanswered(reason: String, maybeDelivered: Bool)
}

/// Where and how to reach `/users/track`.
package struct TrackEndpoint: Sendable {
    /// The full URL of `/users/track` (the query of the base URL kept).
    package let url: String
    /// The REST API key; sent in the Authorization header only, never printed.
    let apiKey: String
    /// An extra CA (PEM) trusted besides the system's.
    package var caFile: String?
    /// Host mappings (`HOST:PORT:HOST2:PORT2`), as curl takes them.
    package var connectTo: [HostMapping] = []
    /// Time allowed for one request, from connect to the last byte of the answer.
    package var requestTimeout: Duration = .seconds(30)

    /// `base` with `/users/track` appended to its path: https, or plain http to 127.0.0.1 only.
    package init(base: String, apiKey: String) throws(AnalyticsError) {
        guard var components = URLComponents(string: base), components.scheme != nil,
            let host = components.host, !host.isEmpty
        else {
            throw AnalyticsError(
                .invalidInput, "'\(base)' is not a URL: give the REST endpoint, such as https://rest.iad-01.braze.com")
        }
        if let problem = EndpointRule.problem(with: base) {
            throw AnalyticsError(.invalidInput, "'\(base)': the REST endpoint \(problem)")
        }
        let trimmed = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
        if !trimmed.hasSuffix("/users/track") { components.path = trimmed + "/users/track" }
        guard let url = components.string else {
            throw AnalyticsError(.invalidInput, "'\(base)' cannot be extended with /users/track")
        }
        let key = apiKey.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !key.isEmpty, !key.contains(where: { $0.isNewline || $0 == "\0" }) else {
            throw AnalyticsError(.apiKey, "the REST API key is empty or spans several lines")
        }
        self.url = url
        self.apiKey = key
    }
}

/// Sends `/users/track` requests, one at a time, as the fetch engine's small-request exchange
/// (``FetchEngine/exchange(_:)``) on a one-loop engine of its own.
///
/// - Warning: call ``stop()`` when done, so no curl handle outlives the client.
package final class TrackClient: Sendable {
    private let engine: FetchEngine
    package let endpoint: TrackEndpoint

    package init(endpoint: TrackEndpoint) throws(AnalyticsError) {
        self.endpoint = endpoint
        do {
            engine = try FetchEngine(loops: 1)
        } catch {
            throw AnalyticsError(.storage, "cannot start the HTTP client: \(error)")
        }
    }

    /// Stops the engine; idempotent.
    package func stop() { engine.shutdown() }

    /// The response headers a flush reads.
    static let rateHeaders = ["Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]

    /// POSTs `body` and waits for the answer, or for the request timeout.
    package func send(_ body: TrackBody) async -> TrackExchange {
        await send(body, deadline: .now + endpoint.requestTimeout)
    }

    /// POSTs `body` and waits for the answer, or until `deadline` (or the request timeout, if sooner).
    ///
    /// Everything the endpoint sent back is redacted here, at the one place endpoint text enters
    /// richpush: the key never reaches a message, a summary or a file, however the endpoint echoes it.
    package func send(_ body: TrackBody, deadline: ContinuousClock.Instant) async -> TrackExchange {
        var request = SmallRequest(
            method: "POST", url: endpoint.url, body: body.json.utf8,
            headers: [
                "Content-Type: application/json", "Accept: application/json",
                "Authorization: Bearer " + endpoint.apiKey,
            ], deadline: min(deadline, .now + endpoint.requestTimeout))
        // Plain http only where the endpoint rule allows it (to 127.0.0.1), as every small request.
        request.allowsHTTP = EndpointRule.problem(with: endpoint.url) == nil
        request.caFile = endpoint.caFile
        request.hostMappings = endpoint.connectTo
        request.userAgent = "richpush-analytics"
        request.headBytes = 1 << 20
        request.capturedHeaders = Self.rateHeaders
        let outcome = await engine.exchange(request)
        let redaction = SecretRedaction(secret: endpoint.apiKey)
        switch Self.reach(of: outcome.failure) {
        case .answered:
            return .answered(
                status: outcome.httpStatus, body: redaction.body(outcome.body.head),
                headers: redaction.headers(outcome.capturedHeaders))
        case .neverLeft:
            return .unanswered(reason: redaction.text(Self.describe(outcome)), maybeDelivered: false)
        case .maybeDelivered:
            return .unanswered(reason: redaction.text(Self.describe(outcome)), maybeDelivered: true)
        }
    }

    /// How far a request got.
    typealias Reach = FailureFacts.Reach

    /// How far a request got, by its transfer's failure: the failure table's (``FailureFacts``).
    static func reach(of failure: TransferFailure?) -> Reach {
        guard let failure else { return .answered }
        return FetchError.Code.Kind(failure).facts.reach
    }

    private static func describe(_ outcome: TransferOutcome) -> String {
        if outcome.failure == .headersTooLarge { return "the answer's headers are over libcurl's 100 KB limit" }
        let failure = outcome.failure.map { "\($0)" } ?? "no answer"
        return outcome.diagnostic.isEmpty ? failure : failure + " (" + outcome.diagnostic + ")"
    }
}
