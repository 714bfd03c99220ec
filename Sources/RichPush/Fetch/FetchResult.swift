import CurlKit

/// Times from the start of a transfer to each milestone, as curl's `-w` reports them.
///
/// Each is cumulative from the transfer's start (`firstByte` includes `connect`); `queue` is the
/// time spent waiting for a loop before the transfer started, and is not included in the others.
public struct FetchTimings: Sendable, Equatable, Codable {
    public var queue: Duration
    public var dns: Duration
    public var connect: Duration
    public var tls: Duration
    public var firstByte: Duration
    public var total: Duration

    public init(
        queue: Duration = .zero, dns: Duration = .zero, connect: Duration = .zero, tls: Duration = .zero,
        firstByte: Duration = .zero, total: Duration = .zero
    ) {
        self.queue = queue
        self.dns = dns
        self.connect = connect
        self.tls = tls
        self.firstByte = firstByte
        self.total = total
    }
}

/// A finished download: what a report needs to say about it.
public struct FetchResult: Sendable {
    /// The final HTTP status (2xx: anything else is a ``FetchError``).
    public var httpStatus: Int
    /// The URL of the last request, after redirects.
    public var effectiveURL: String
    /// Redirects followed.
    public var redirectCount: Int
    /// The Content-Type header (which iOS ignores: the file extension decides).
    public var contentType: String?
    /// The Content-Encoding header; the body is stored as sent, never decoded.
    public var contentEncoding: String?
    /// Body bytes stored.
    public var bytes: Int64
    /// Milestone times.
    public var timings: FetchTimings
    /// What was learned from the body as it arrived (its first bytes and SHA-256), when the policy asked
    /// for it (``FetchPolicy/keepsBodySummary``): the verdict never reads a download back.
    public var body = BodySummary()
}
