/// One answered request, as `serve --access-log` prints it.
package struct AccessLogEntry: Sendable, Equatable {
    /// The request method (`GET`, `HEAD`, ...).
    package var method: String
    /// The request target as sent (path and query), control characters percent-escaped.
    package var target: String
    /// The status sent, or nil when the connection ended before a status line (`reset=0`, a client that left).
    package var status: Int?
    /// Body bytes handed to the connection (not counting headers).
    package var bytes: UInt64
    /// Milliseconds from the request line to the end of the response.
    package var milliseconds: Double
    /// Query parameters no fault reads, which the server ignored (``FaultPlan/ignoredParameters``).
    package var ignoredParameters: [String] = []

    /// `GET /hero.jpg?delay=50 200 302512 bytes 51.3 ms`; a missing status prints as `-`; ignored
    /// parameters follow (`ignored: utm_source, sig`).
    package var line: String {
        let tenths = (milliseconds * 10).rounded() / 10
        let ignored = ignoredParameters.isEmpty ? "" : " (ignored: " + ignoredParameters.joined(separator: ", ") + ")"
        return "\(method) \(target) \(status.map(String.init) ?? "-") \(bytes) bytes \(tenths) ms" + ignored
    }
}
