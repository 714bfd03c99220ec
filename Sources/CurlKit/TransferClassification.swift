import CCurlShim
import Foundation

/// What a finished transfer left to decide its failure from: a plain value, read from the easy
/// handle once, so ``TransferClassification/classify(_:)`` is a pure function a table can test.
struct TransferFacts: Sendable {
    var code: CURLcode
    var spec: TransferSpec
    var status: Int
    /// The body went over its cap (the sink stopped it).
    var capExceeded: Bool
    /// The sink's write failure, if any.
    var writeErrno: Int32
    /// The last hop's connection was up (its request was about to be sent).
    var hopConnected: Bool
    /// For a refused scheme: the URL the transfer was led to (the last Location, or where curl moved).
    var redirectTarget: String
    /// For a 3xx not followed: where it points.
    var redirectURL: String
    /// The system error libcurl saw (CURLINFO_OS_ERRNO).
    var osErrno: Int
    /// libcurl's error text (only read where a code is ambiguous: CURLE_OUT_OF_MEMORY).
    var message = ""
    /// When the transfer ended, against the spec's deadline.
    var now: ContinuousClock.Instant = .now
}

/// The one place a `CURLcode` becomes a ``TransferFailure``: the part that varies between libcurl
/// versions, kept apart from the loop and tested result by result.
enum TransferClassification {
    /// The one place a `CURLcode` becomes a ``TransferFailure``.
    ///
    /// Timeouts are decided from the absolute deadline, not from curl's text: past the deadline it
    /// is the deadline; before it, a hop whose connection was up (its request was about to be sent)
    /// stalled, and one whose connection never came up timed out connecting. A refused scheme is a
    /// redirect's when the URL the transfer was led to has a scheme outside the allowed list.
    static func classify(_ facts: TransferFacts) -> TransferFailure? {
        let spec = facts.spec
        let status = facts.status
        let redirectURL = facts.redirectURL
        let redirectTarget = facts.redirectTarget
        switch facts.code {
        case CURLE_OK:
            if !spec.followRedirects, (300..<400).contains(status), !redirectURL.isEmpty {
                return .redirect(location: redirectURL)
            }
            return (200..<300).contains(status) ? nil : .httpStatus
        case CURLE_OPERATION_TIMEDOUT:
            // curl's TIMEOUT_MS was computed from the deadline when the transfer started; its timer may
            // fire a hair early.
            if facts.now >= spec.deadline - .milliseconds(20) { return .deadlineExceeded }
            if !facts.hopConnected { return .connectTimeout }
            return spec.lowSpeedSeconds > 0 ? .stalled : .deadlineExceeded
        case CURLE_UNSUPPORTED_PROTOCOL:
            if !allows(scheme(of: spec.url), in: spec.schemes) { return .schemeRefused }
            // The last response's Location (or the URL curl moved to): a refused redirect names a
            // scheme outside the list, data: and file: included, even when curl cannot parse it.
            if let target = scheme(of: redirectTarget), !allows(target, in: spec.schemes) {
                return .redirectRefused(target: redirectTarget)
            }
            // curl 7.88 also uses this code for a reply that is not HTTP at all ("HTTP/0.9").
            return .protocolError
        case CURLE_URL_MALFORMAT: return .malformedURL
        case CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_RESOLVE_HOST: return .dnsFailed
        case CURLE_COULDNT_CONNECT:
            return facts.osErrno == Int(EMFILE) || facts.osErrno == Int(ENFILE) ? .outOfDescriptors : .connectFailed
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_CERTPROBLEM,
            CURLE_SSL_CIPHER, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CACERT_BADFILE,
            CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            return .tlsFailed
        case CURLE_TOO_MANY_REDIRECTS: return .tooManyRedirects
        case CURLE_FILESIZE_EXCEEDED: return .declaredTooLarge
        case CURLE_WRITE_ERROR:
            return facts.capExceeded ? .capExceeded : .writeFailed(errno: facts.writeErrno)
        case CURLE_HTTP_RETURNED_ERROR: return .httpStatus
        case CURLE_PARTIAL_FILE: return .truncated
        case CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR: return .connectionReset
        case CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2, CURLE_BAD_CONTENT_ENCODING, CURLE_HTTP3:
            return .protocolError
        case CURLE_ABORTED_BY_CALLBACK: return .engineStopped
        case CURLE_OUT_OF_MEMORY:
            // libcurl 7.88 refuses response headers over CURL_MAX_HTTP_HEADER with this code (its note,
            // "Avoided giant realloc for header", reaches only the verbose log, not the error text); the
            // answer is the server's fault. Before the request was sent it is a real allocation failure.
            return facts.hopConnected || facts.message.localizedCaseInsensitiveContains("header")
                ? .headersTooLarge : .other
        default: return .other
        }
    }

    /// The URL's scheme, when it starts with one (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`).
    private static func scheme(of url: String) -> Substring? {
        guard let colon = url.firstIndex(of: ":"), colon > url.startIndex else { return nil }
        let scheme = url[..<colon]
        guard scheme.first?.isASCII == true, scheme.first?.isLetter == true,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        return scheme
    }

    private static func allows(_ scheme: Substring?, in allowed: Set<String>) -> Bool {
        guard let scheme else { return false }
        return allowed.contains(scheme.lowercased())
    }
}
