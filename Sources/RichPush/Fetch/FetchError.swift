import POSIXKit

/// Why a download failed: a stable code, a message that says what to do, and what was known.
///
/// The ``Code`` is what reports tally (`results.ndjson`, bench histograms); its text never
/// changes once released. The message names the URL and is meant for people.
public struct FetchError: Error, Sendable, CustomStringConvertible {
    /// A stable, payload-free name for a way a download can fail.
    public struct Code: Hashable, Sendable, CustomStringConvertible, Codable {
        /// Every code as an enum, for switches that must name each one: a new code does not
        /// compile until every such switch maps it (no `default:`).
        public enum Kind: String, Sendable, CaseIterable {
            case invalidURL = "invalid-url"
            case invalidHostMapping = "invalid-host-mapping"
            case schemeNotAllowed = "scheme-not-allowed"
            case redirectNotAllowed = "redirect-not-allowed"
            case tooManyRedirects = "too-many-redirects"
            case dnsFailed = "dns-failed"
            case connectFailed = "connect-failed"
            case connectTimeout = "connect-timeout"
            case tlsFailed = "tls-failed"
            case deadlineExceeded = "deadline-exceeded"
            case stalled = "stalled"
            case tooLarge = "too-large"
            case httpStatus = "http-status"
            case truncated = "truncated"
            case connectionReset = "connection-reset"
            case protocolError = "protocol-error"
            case storageFailed = "storage-failed"
            case cancelled = "cancelled"
            case engineStopped = "engine-stopped"
            case transferFailed = "transfer-failed"
            case tooManyOpenFiles = "too-many-open-files"
            case atsBlocked = "ats-blocked"
        }

        private let base: Kind
        package init(_ base: Kind) { self.base = base }

        /// Which code it is, for an exhaustive switch.
        public var kind: Kind { base }

        /// The URL is not a URL curl can fetch.
        public static let invalidURL = Code(.invalidURL)
        /// A host mapping rule is malformed.
        public static let invalidHostMapping = Code(.invalidHostMapping)
        /// The URL's scheme is not allowed (http under ATS, file, ftp, ...).
        public static let schemeNotAllowed = Code(.schemeNotAllowed)
        /// A redirect pointed at a scheme that is not allowed (http under ATS, file, ...).
        public static let redirectNotAllowed = Code(.redirectNotAllowed)
        /// More redirects than allowed.
        public static let tooManyRedirects = Code(.tooManyRedirects)
        /// The host name did not resolve.
        public static let dnsFailed = Code(.dnsFailed)
        /// The TCP connection was refused or failed.
        public static let connectFailed = Code(.connectFailed)
        /// DNS, TCP and TLS did not complete within the connect timeout.
        public static let connectTimeout = Code(.connectTimeout)
        /// The TLS handshake or certificate verification failed.
        public static let tlsFailed = Code(.tlsFailed)
        /// The overall deadline (the device's budget) passed.
        public static let deadlineExceeded = Code(.deadlineExceeded)
        /// Too few bytes arrived for too long.
        public static let stalled = Code(.stalled)
        /// The body is larger than the cap (declared by Content-Length or counted as it arrived).
        public static let tooLarge = Code(.tooLarge)
        /// The server answered with a status other than 2xx.
        public static let httpStatus = Code(.httpStatus)
        /// The connection closed before the declared Content-Length arrived.
        public static let truncated = Code(.truncated)
        /// The connection was reset or closed with nothing (more) received.
        public static let connectionReset = Code(.connectionReset)
        /// The server's reply was not valid HTTP.
        public static let protocolError = Code(.protocolError)
        /// Writing the body to disk failed.
        public static let storageFailed = Code(.storageFailed)
        /// The caller cancelled the download.
        public static let cancelled = Code(.cancelled)
        /// The engine was shut down while the download waited or ran.
        public static let engineStopped = Code(.engineStopped)
        /// App Transport Security (the service extension's Info.plist) refuses the URL or a redirect's target.
        public static let atsBlocked = Code(.atsBlocked)
        /// richpush itself ran out of file descriptors (EMFILE): the client's limit, not the host's.
        public static let tooManyOpenFiles = Code(.tooManyOpenFiles)
        /// Any other libcurl failure (the message carries curl's code and text).
        public static let transferFailed = Code(.transferFailed)

        /// Every code, in documentation order.
        public static let all: [Code] = [
            .invalidURL, .invalidHostMapping, .schemeNotAllowed, .redirectNotAllowed, .tooManyRedirects, .dnsFailed,
            .connectFailed, .connectTimeout, .tlsFailed, .deadlineExceeded, .stalled, .tooLarge, .httpStatus,
            .truncated, .connectionReset, .protocolError, .storageFailed, .cancelled, .engineStopped, .transferFailed,
            .tooManyOpenFiles, .atsBlocked,
        ]

        /// The stable kebab-case name, for example `deadline-exceeded`.
        public var description: String { base.rawValue }

        public init(from decoder: any Decoder) throws {
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let base = Kind(rawValue: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: text))
            }
            self.base = base
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(base.rawValue)
        }
    }

    /// Which failure it was.
    public var code: Code
    /// What went wrong and what to do, naming the URL.
    public var message: String
    /// What was known when it failed: status, bytes, timings (nil when nothing was sent).
    public var details: FetchResult?
    /// The lower-level cause, for example libcurl's code and text: for people, never to be parsed.
    public var cause: String?
    /// For `redirect-not-allowed` and `ats-blocked`: the URL the redirect led to.
    public var redirectTarget: String?
    /// A likely fix (for `ats-blocked`: the plist snippet that would allow the load; for `tls-failed`: what
    /// fits the TLS problem).
    public var hint: String?
    /// For `tls-failed`: which TLS problem it was (host name, issuer, dates, chain, protocol).
    package var tlsProblem: TLSProblem?
    /// For `storage-failed` (and `too-many-open-files` from a system call): the failed system call,
    /// with its errno.
    package var systemError: SystemError?

    public init(
        _ code: Code, _ message: String, details: FetchResult? = nil, cause: String? = nil,
        redirectTarget: String? = nil
    ) {
        self.code = code
        self.message = message
        self.details = details
        self.cause = cause
        self.redirectTarget = redirectTarget
    }

    /// A download that could not be stored because a system call failed (`storage-failed`; one that
    /// ran out of descriptors was noted by ``SystemCall``, so the verdict blames the client): the
    /// system's message, and the call kept.
    package init(storing error: SystemError) {
        self.init(.storageFailed, error.message)
        systemError = error
    }

    public var description: String { "\(code): \(message)" }
}
