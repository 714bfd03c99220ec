import CurlKit

/// One small HTTP request that is not a download: an SDK's own call (OneSignal's receipt,
/// Customer.io's delivery metric) or a `/users/track` POST. Built and sent in one place
/// (``FetchEngine/exchange(_:)``): a fresh connection each time (libcurl silently sends a request
/// again on a reused connection that turns out dead, and a resent request is a duplicate nobody
/// would account for), no redirect followed, the answer's head and the named headers kept.
package struct SmallRequest: Sendable {
    package var method: String
    package var url: String
    package var body: [UInt8]
    /// Request headers, `Name: value` each.
    package var headers: [String]
    /// When the exchange gives up, whatever it is doing.
    package var deadline: ContinuousClock.Instant
    /// DNS, TCP and TLS at most this long (and never past ``deadline``).
    package var connectTimeout: Duration = .seconds(10)
    /// Whether plain http may be used; https always may.
    package var allowsHTTP = false
    package var caFile: String?
    package var systemCAFile: String?
    package var hostMappings: [HostMapping] = []
    package var userAgent = "richpush"
    /// Bytes of the answer's body kept.
    package var headBytes = 4096
    /// Response headers read, by name.
    package var capturedHeaders: [String] = []

    package init(method: String, url: String, body: [UInt8], headers: [String], deadline: ContinuousClock.Instant) {
        self.method = method
        self.url = url
        self.body = body
        self.headers = headers
        self.deadline = deadline
    }

    /// The transfer libcurl runs for it.
    var spec: TransferSpec {
        let remaining = max(deadline - .now, .milliseconds(1))
        var spec = TransferSpec(
            url: url, schemes: allowsHTTP ? ["https", "http"] : ["https"], maxRedirects: 0, deadline: deadline,
            connectTimeoutMilliseconds: max(1, Int(min(remaining, connectTimeout) / .milliseconds(1))),
            caFile: caFile, systemCAFile: systemCAFile, connectTo: hostMappings.map(\.description),
            freshConnection: true, followRedirects: false, userAgent: userAgent, headBytes: headBytes)
        spec.method = method
        spec.requestBody = body
        spec.requestHeaders = headers
        spec.failOnHTTPError = false
        spec.capturedHeaders = capturedHeaders
        return spec
    }
}

extension FetchEngine {
    /// Sends `request` on one of the engine's loops and waits for its answer, or its failure.
    package func exchange(_ request: SmallRequest) async -> TransferOutcome {
        await group.transfer(request.spec, writingTo: -1)
    }
}
