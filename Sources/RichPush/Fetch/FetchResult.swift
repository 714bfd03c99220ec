import CurlKit

/// Times from the start of a transfer to each milestone, as curl's `-w` reports them.
///
/// Each is cumulative from the transfer's start (`firstByte` includes `connect`); `queue` is the
/// time spent waiting for a loop before the transfer started, and is not included in the others.
///
/// This is richpush's one timing type: the outcome's `download`, batch records, `fetch`'s report and
/// the benchmark all carry it. Its JSON is the `timings_ms` object, milliseconds to the microsecond:
/// `{"queue": 0.012, "dns": 0.25, "connect": 1.5, "tls": 4.75, "first_byte": 10, "total": 20.125}`.
public struct FetchTimings: Sendable, Equatable, Decodable {
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

    enum CodingKeys: String, CodingKey, CaseIterable {
        case queue, dns, connect, tls
        case firstByte = "first_byte"
        case total
    }

    /// The milestones with their JSON names, in the order they happen.
    var milestones: [(key: CodingKeys, value: Duration)] {
        [(.queue, queue), (.dns, dns), (.connect, connect), (.tls, tls), (.firstByte, firstByte), (.total, total)]
    }

    /// The `timings_ms` object.
    /// The timings as JSON, the `timings_ms` object of an outcome's `download`.
    public var jsonText: String { json.text }

    package var json: JSONValue {
        .object(milestones.map { ($0.key.rawValue, .number(String($0.value.inMilliseconds))) })
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func read(_ key: CodingKeys) throws -> Duration {
            .milliseconds(reported: try container.decode(Double.self, forKey: key))
        }
        self.init(
            queue: try read(.queue), dns: try read(.dns), connect: try read(.connect), tls: try read(.tls),
            firstByte: try read(.firstByte), total: try read(.total))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        for (key, value) in milestones { try container.encode(value.inMilliseconds, forKey: key) }
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
    /// The Content-Encoding header; a coding the policy asked for (gzip, deflate, br) is decoded before
    /// the body is stored, as URLSession does, and any other is stored as sent.
    public var contentEncoding: String?
    /// Body bytes stored (decoded).
    public var bytes: Int64
    /// Body bytes that came over the connection (before decoding): equal to ``bytes`` for a body sent
    /// without a content coding.
    public var wireBytes: Int64 = 0
    /// The HTTP version of the last response: "1.1", "2", ... ("" when none arrived).
    public var httpVersion = ""
    /// Milestone times.
    public var timings: FetchTimings
    /// What was learned from the body as it arrived (its first bytes and SHA-256), when the policy asked
    /// for it (``FetchPolicy/keepsBodySummary``): the verdict never reads a download back.
    package var body = BodySummary()
    /// The Content-Length the server declared, when it sent one: the asset's size even when the
    /// download stopped early (an expired verdict sizes its hint with it).
    public var contentLength: Int64? = nil
    /// The download as `curl -v` shows it, when the policy asked for it (``FetchPolicy/tracesTransfer``):
    /// every hop's lines in order. Print ``TransferTrace/rendered``; its text is already escaped.
    package var trace: TransferTrace? = nil
    /// The Content-Disposition header, when the policy asked for it (`FetchPolicy.readsContentDisposition`):
    /// `URLResponse.suggestedFilename` prefers its filename.
    public var contentDisposition: String? = nil
    /// What the cache headers say, when the policy reads them (``FetchPolicy/readsCacheHeaders``).
    package var cache = CacheResult.none
    /// New connections the download opened, over every hop (0: it reused one).
    public var connectionsMade = 0
}
