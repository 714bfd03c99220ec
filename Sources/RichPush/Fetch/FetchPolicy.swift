import CurlKit

/// The limits one download runs under: what a service extension on a phone is allowed to do.
///
/// Every limit a hostile or broken server could push past is here, with the phone's values as
/// defaults. The overall deadline is not here: it is per fetch (see `FetchRequest`).
public struct FetchPolicy: Sendable {
    /// Whether a connection is shared between transfers.
    public enum Connections: String, Sendable {
        /// A new connection and TLS session per transfer, closed afterwards: what separate phones do.
        case fresh
        /// Connections (and TLS sessions) kept and reused between transfers on the same loop.
        case shared
    }

    /// Whether the response's Content-Disposition is kept (``FetchResult/contentDisposition``): the SDKs
    /// that name files from `URLResponse.suggestedFilename` read it.
    package var readsContentDisposition = false

    /// Accept `http://` URLs and redirects (an extension whose Info.plist allows arbitrary loads).
    public var allowHTTP = false
    /// Redirects followed at most: 20, CFNetwork's own limit since iOS 14 and macOS 11 (16 before),
    /// past which a task fails with NSURLErrorHTTPTooManyRedirects (docs/platform.md).
    public var maxRedirects = 20
    /// Time allowed for DNS, TCP and TLS together.
    public var connectTimeout: Duration = .seconds(10)
    /// Abort when fewer than `stallBytesPerSecond` arrive for `stallWindow`; nil turns stall detection off.
    ///
    /// Off by default: URLSession on the phone waits out the whole budget for a silent server, so
    /// the emulator reports `deadline-exceeded` there too. Turn it on to fail fast in tooling.
    public var stallWindow: Duration?
    /// The speed under which a transfer counts as stalled.
    package var stallBytesPerSecond = 1
    /// Body bytes accepted at most; the transfer stops as soon as one more would arrive.
    public var maxBytes: Int64?
    /// An extra certificate authority (PEM file) trusted besides the system store; verification is never off.
    public var caFile: String?
    /// The system's CA bundle; `nil` is the one libcurl was built with (Debian:
    /// /etc/ssl/certs/ca-certificates.crt). Each fetch loop builds one store from it plus ``caFile``.
    package var systemCAFile: String?
    /// Host mappings: connections to make elsewhere, as curl does.
    public var hostMappings: [HostMapping] = []
    /// Fresh connection per transfer, or shared.
    public var connections: Connections = .fresh
    /// Refuse TLS below 1.2 (App Transport Security's default; ignored when `transportSecurity` is set).
    package var requireTLS12 = true
    /// The service extension's App Transport Security from its Info.plist. When set, it decides every hop:
    /// the URL and each redirect's target are judged by the rules of their own host (scheme and minimum
    /// TLS version), and ``allowHTTP`` is not used. Redirects are then followed by richpush, one
    /// transfer per hop within the same deadline, instead of inside libcurl.
    package var transportSecurity: AppTransportSecurity?
    /// libcurl's receive buffer per transfer: 64 KiB reads fewer times; 16 KiB (libcurl's default)
    /// keeps thousands of transfers in flight small (the bench uses it above 256 in flight).
    package var receiveBufferBytes = 64 * 1024
    /// Keep the body's first bytes (enough to sniff it) and its SHA-256 as it arrives, in
    /// `FetchResult.body`, so the verdict never reads the download back.
    package var keepsBodySummary = false
    /// With ``keepsBodySummary``, also compute the body's SHA-256 as it arrives (the attachment store
    /// names files by it). About a fifth of a device's CPU for a 300 KB image: a bench that stores
    /// nothing turns it off.
    package var hashesBody = true
    /// The network the download goes over: nil is loopback as it is; a profile routes the connection
    /// through the engine's shaping relay for that profile (see `NetworkRelay`).
    public var network: NetworkProfile?
    /// Keep a `curl -v` style trace of each download in `FetchResult.trace` (and in a failure's
    /// details): libcurl's verbose lines, request and response headers, address and timings. For one
    /// download someone reads, not for a burst: it costs libcurl's verbose formatting per transfer.
    package var tracesTransfer = false
    /// The User-Agent header: CFNetwork's, for the service extension's bundle (`DeviceUserAgent`).
    public var userAgent = DeviceUserAgent().description
    /// The headers URLSession adds to every request of a default session besides User-Agent and
    /// Accept-Encoding: `Accept: */*` and the device's language list (a US-English iPhone's).
    package static let deviceHeaders = [
        RequestHeader(name: "Accept", value: "*/*"), RequestHeader(name: "Accept-Language", value: "en-US,en;q=0.9"),
    ]
    /// The codings URLSession asks for and decodes before the file is written; `nil` keeps the body as
    /// sent (no `Accept-Encoding`). Apple's size caps (``maxBytes``) apply to the decoded bytes.
    package var acceptEncoding: String? = "gzip, deflate, br"
    /// Headers given by the user (`-H`): each replaces the device's header of its name, `Name:` removes it.
    package var requestHeaders: [RequestHeader] = [] {
        didSet { headerLines = Self.lines(merging: requestHeaders) }
    }
    /// Offer HTTP/2 through ALPN on https, as iOS does (a server that only speaks 1.1 gets 1.1).
    package var offersHTTP2 = true
    /// Read the cache headers of each response (`CacheResult/headerNames`) into `FetchResult.cache`:
    /// a bench asks for them; a header look-up per name per download otherwise nobody reads.
    package var readsCacheHeaders = false
    /// Follow a redirect only to this machine (127.0.0.0/8, ::1, localhost, after ``hostMappings``):
    /// a bench that may load only this machine keeps every hop on it (``EndpointRule``).
    package var redirectsStayLocal = false

    /// The header lines sent besides User-Agent and Accept-Encoding (libcurl's own): the device's,
    /// with the user's merged in (``RequestHeader/merged(_:with:)``). Merged when the headers are set,
    /// not per download: a bench's devices all send the same lines.
    private(set) var headerLines: [String] = FetchPolicy.lines(merging: [])

    private static func lines(merging headers: [RequestHeader]) -> [String] {
        RequestHeader.merged(deviceHeaders, with: headers).map(\.description)
    }

    public init() {}

    /// The CA bundle libcurl was built with, which richpush trusts besides ``caFile`` by default.
    package static var defaultSystemCAFile: String? { CurlLoopGroup.systemCABundle }

    /// The schemes allowed for the URL and every redirect.
    var schemes: Set<String> { allowHTTP ? ["http", "https"] : ["https"] }

    /// The allowed schemes as messages list them: `https`, or `http, https`.
    var schemesText: String { schemes.sorted().joined(separator: ", ") }

    /// Whether `scheme` may be fetched under this policy.
    package func allows(scheme: String) -> Bool {
        switch scheme.lowercased() {
        case "https": return true
        case "http": return allowHTTP
        default: return false
        }
    }
}

/// One download: where from and by when.
package struct FetchRequest: Sendable {
    /// The asset URL.
    package var url: String
    /// The instant by which the download must be over: the device's budget, made absolute once.
    package var deadline: ContinuousClock.Instant
    /// The limits it runs under.
    package var policy: FetchPolicy

    package init(url: String, deadline: ContinuousClock.Instant, policy: FetchPolicy = FetchPolicy()) {
        self.url = url
        self.deadline = deadline
        self.policy = policy
    }

    /// A request whose deadline is `budget` from now.
    package init(url: String, budget: Duration, policy: FetchPolicy = FetchPolicy()) {
        self.init(url: url, deadline: .now + budget, policy: policy)
    }
}
