/// Everything one libcurl transfer is configured with; plain values, so it can cross threads.
///
/// CurlKit applies these options as given. The policy behind them (which schemes, which caps)
/// belongs to the caller; see `RichPush.FetchPolicy`.
package struct TransferSpec: Sendable {
    /// The URL to download.
    package var url: String
    /// Schemes allowed for the URL and for every redirect, lowercase: `["https"]` or `["http", "https"]`.
    package var schemes: Set<String>
    /// Redirects followed at most; more fails with CURLE_TOO_MANY_REDIRECTS.
    package var maxRedirects: Int
    /// The instant by which the transfer must be over, whatever happens; time spent queued counts.
    package var deadline: ContinuousClock.Instant
    /// Time allowed for DNS, TCP and TLS together, in milliseconds.
    package var connectTimeoutMilliseconds: Int
    /// Stall detection: abort when fewer than `lowSpeedLimit` bytes/s arrive for `lowSpeedSeconds`.
    package var lowSpeedLimit: Int
    /// Seconds of low speed tolerated; 0 turns stall detection off.
    package var lowSpeedSeconds: Int
    /// Body bytes accepted at most (counted as they arrive, and checked against Content-Length early).
    package var maxBytes: Int64?
    /// An extra certificate authority file trusted besides the system's store.
    package var caFile: String?
    /// The system's CA bundle; `nil` is the one libcurl was built with. Tests point it elsewhere.
    package var systemCAFile: String?
    /// curl `--connect-to` entries: "HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT".
    package var connectTo: [String]
    /// A new connection (and TLS session) for this transfer, closed afterwards, as a separate phone would have.
    package var freshConnection: Bool
    /// The oldest TLS version accepted: 2 for TLS 1.2 (App Transport Security's default), 0 for TLS 1.0.
    ///
    /// Below 1.2 the connection also lowers OpenSSL's security level, as an ATS exception for an old
    /// server needs: OpenSSL 3 otherwise refuses TLS 1.0 and 1.1 whatever the version range says.
    package var minimumTLSMinor: Int
    /// Follow redirects inside libcurl; when false, a 3xx ends the transfer with
    /// ``TransferFailure/redirect(location:)`` so the caller can judge each hop itself.
    package var followRedirects: Bool
    /// The User-Agent header sent.
    package var userAgent: String
    /// The content codings asked for and decoded (CURLOPT_ACCEPT_ENCODING, sent as `Accept-Encoding`):
    /// `"gzip, deflate, br"` as URLSession asks; `nil` asks for none and keeps the body as sent.
    ///
    /// Decoding happens before the sink, so ``maxBytes``, the kept head, the scan and the hash all see
    /// the decoded bytes, and a small compressed body that inflates past the cap stops at the cap.
    /// ``TransferOutcome/wireBytes`` counts what came over the connection.
    package var acceptEncoding: String? = nil
    /// Offer HTTP/2 through ALPN on https (CURL_HTTP_VERSION_2TLS), as iOS does; HTTP/1.1 otherwise.
    package var offersHTTP2 = true
    /// libcurl's receive buffer (CURLOPT_BUFFERSIZE), allocated per transfer.
    ///
    /// libcurl 7.88 checks the socket with poll(2) after every read; a larger buffer means fewer
    /// read+poll pairs per body. 64 KiB cuts them fourfold against the 16 KiB default while keeping
    /// a thousand transfers in flight within 64 MB.
    package var receiveBufferBytes: Int
    /// The first body bytes kept in memory for the caller (the sniffer), as they arrive.
    package var headBytes: Int
    /// How far into the body to look for an MPEG-4 video handler and the end of an ID3v2 tag.
    package var scanLimit: Int
    /// Compute the body's SHA-256 as it arrives.
    package var hashBody: Bool
    /// The request method: "GET" (the default, every download) or "POST" with ``requestBody``.
    package var method = "GET"
    /// The bytes sent as the request body (a POST); `nil` sends none.
    package var requestBody: [UInt8]?
    /// Extra request headers, as "Name: value" lines.
    package var requestHeaders: [String] = []
    /// A status of 400 or more ends the transfer at once (libcurl's FAILONERROR), as downloads want.
    /// When false, the response body still arrives and is kept in ``TransferOutcome/body`` (its head),
    /// so an API's error message can be read; the failure is still ``TransferFailure/httpStatus``.
    package var failOnHTTPError = true
    /// Response headers to report in ``TransferOutcome/capturedHeaders`` (names, case-insensitive).
    package var capturedHeaders: [String] = []
    /// Keep a `curl -v` style trace of the transfer in ``TransferOutcome/trace`` (libcurl's verbose
    /// output: costly, for one download someone looks at, not for a burst).
    package var trace = false
    /// Bytes of libcurl's verbose output kept at most for the trace.
    package var traceLimit = 64 * 1024

    /// Creates a spec with conservative defaults: https only, 5 redirects, no cap.
    package init(
        url: String,
        schemes: Set<String> = ["https"],
        maxRedirects: Int = 5,
        deadline: ContinuousClock.Instant,
        connectTimeoutMilliseconds: Int = 10_000,
        lowSpeedLimit: Int = 1,
        lowSpeedSeconds: Int = 0,
        maxBytes: Int64? = nil,
        caFile: String? = nil,
        systemCAFile: String? = nil,
        connectTo: [String] = [],
        freshConnection: Bool = true,
        minimumTLSMinor: Int = 2,
        followRedirects: Bool = true,
        userAgent: String = "richpush",
        receiveBufferBytes: Int = 64 * 1024,
        headBytes: Int = 0,
        scanLimit: Int = 0,
        hashBody: Bool = false,
        trace: Bool = false
    ) {
        self.trace = trace
        self.receiveBufferBytes = receiveBufferBytes
        self.headBytes = headBytes
        self.scanLimit = scanLimit
        self.hashBody = hashBody
        self.url = url
        self.schemes = Set(schemes.map { $0.lowercased() })
        self.maxRedirects = maxRedirects
        self.deadline = deadline
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        self.lowSpeedLimit = lowSpeedLimit
        self.lowSpeedSeconds = lowSpeedSeconds
        self.maxBytes = maxBytes
        self.caFile = caFile
        self.systemCAFile = systemCAFile
        self.connectTo = connectTo
        self.freshConnection = freshConnection
        self.minimumTLSMinor = minimumTLSMinor
        self.followRedirects = followRedirects
        self.userAgent = userAgent
    }
}

/// What libcurl reported when a transfer ended, successful or not.
package struct TransferOutcome: Sendable {
    /// Why it failed; `nil` when the body arrived with a 2xx status.
    package var failure: TransferFailure?
    /// libcurl's code and text, for people (reports' "cause"); never to be parsed.
    package var diagnostic: String
    /// The last HTTP status received (0 when none).
    package var httpStatus: Int
    /// The URL of the last request, after redirects.
    package var effectiveURL: String
    /// Redirects followed.
    package var redirectCount: Int
    /// The Content-Type response header, if any.
    package var contentType: String?
    /// The Content-Encoding response header, if any.
    package var contentEncoding: String?
    /// The declared Content-Length, if any.
    package var contentLength: Int64?
    /// Body bytes written to the sink: decoded, when ``TransferSpec/acceptEncoding`` decoded them.
    package var bytes: Int64
    /// Body bytes as they came over the connection (before content decoding, after de-chunking):
    /// libcurl's CURLINFO_SIZE_DOWNLOAD_T, of the last hop.
    package var wireBytes: Int64 = 0
    /// The HTTP version the last response came over: "1.0", "1.1", "2", "3", or "" when none arrived.
    package var httpVersion = ""
    /// New connections libcurl opened for the transfer (CURLINFO_NUM_CONNECTS): 0 when it reused one.
    package var connectionsMade = 0
    /// Microseconds from start to: name resolved, TCP connected, TLS done, first byte, end.
    package var dnsMicros: Int64, connectMicros: Int64, tlsMicros: Int64, firstByteMicros: Int64, totalMicros: Int64
    /// Microseconds between submission to the loop and the transfer's start on it.
    package var queueMicros: Int64
    /// Milliseconds the transfer was allowed when it started (TIMEOUT_MS as set).
    package var timeoutMilliseconds: Int
    /// What was learned from the body as it arrived (see ``TransferSpec/headBytes``).
    package var body: BodySummary = BodySummary()
    /// The values of the response headers named in ``TransferSpec/capturedHeaders`` that were present.
    package var capturedHeaders: [String: String] = [:]
    /// For a ``TransferFailure/tlsFailed`` transfer: which TLS problem it was, and the certificate facts.
    package var tls: TLSDiagnosis?
    /// The transfer's trace, when ``TransferSpec/trace`` asked for one.
    package var trace: TransferTrace?

    /// An outcome for a transfer that never reached libcurl.
    package static func notStarted(_ failure: TransferFailure, diagnostic: String) -> TransferOutcome {
        TransferOutcome(
            failure: failure, diagnostic: diagnostic, httpStatus: 0, effectiveURL: "", redirectCount: 0,
            contentType: nil, contentEncoding: nil, contentLength: nil, bytes: 0, dnsMicros: 0, connectMicros: 0,
            tlsMicros: 0, firstByteMicros: 0, totalMicros: 0, queueMicros: 0, timeoutMilliseconds: 0)
    }
}

/// What a transfer learned from its body as the bytes went by, so nobody has to read them back.
package struct BodySummary: Sendable, Equatable {
    /// The first ``TransferSpec/headBytes`` bytes (fewer when the body was shorter), where they were kept.
    package var keptHead = KeptBytes([])
    /// Up to 16 KiB after a leading ID3v2 tag that ends within the scan limit; `nil` when there is none.
    package var keptAfterTag: KeptBytes?
    /// Where that ID3v2 tag ends, when the body starts with one.
    package var tagEnd: Int?
    /// An MPEG-4 track handler of type `vide` appeared within the scan limit.
    package var videoHandler = false
    /// SHA-256 of the whole body, lower-case hex, when hashing was asked for and worked.
    package var sha256: String?

    package init() {}

    /// A copy of ``keptHead`` (an error body's text, for example); the sniffer reads ``keptHead`` in place.
    package var head: [UInt8] {
        get { keptHead.array }
        set { keptHead = KeptBytes(newValue) }
    }

    /// A copy of ``keptAfterTag``.
    package var afterTag: [UInt8]? {
        get { keptAfterTag?.array }
        set { keptAfterTag = newValue.map(KeptBytes.init) }
    }
}
