/// Why a transfer failed, decided inside CurlKit so that no code above it reads a `CURLcode` or
/// libcurl's message text (both change between libcurl versions; the message is for people only).
package enum TransferFailure: Sendable, Equatable {
    /// The caller cancelled the transfer.
    case cancelled
    /// The loop was stopped while the transfer waited or ran.
    case engineStopped
    /// The absolute deadline passed (decided from the deadline itself, not from curl's text).
    case deadlineExceeded
    /// DNS, TCP and TLS of a hop did not complete within the connect timeout.
    case connectTimeout
    /// The connection was up and too few bytes arrived for too long (stall detection).
    case stalled
    /// The URL's own scheme is not in the allowed list.
    case schemeRefused
    /// A redirect led to `target`, whose scheme is not in the allowed list.
    case redirectRefused(target: String)
    /// The URL could not be parsed.
    case malformedURL
    /// The host name did not resolve.
    case dnsFailed
    /// The TCP connection was refused or failed.
    case connectFailed
    /// This process ran out of file descriptors (EMFILE or ENFILE): the client's limit, not the host's.
    case outOfDescriptors
    /// The TLS handshake or the certificate verification failed.
    case tlsFailed
    /// The trust store could not be built from `file`.
    case trustStoreUnreadable(file: String, reason: String)
    /// More redirects than allowed.
    case tooManyRedirects
    /// The declared Content-Length is over the cap.
    case declaredTooLarge
    /// More bytes arrived than the cap allows.
    case capExceeded
    /// Writing the body failed with this errno.
    case writeFailed(errno: Int32)
    /// The last response's status was not 2xx.
    case httpStatus
    /// The connection closed before the declared Content-Length arrived.
    case truncated
    /// The connection was reset or closed with nothing (more) received.
    case connectionReset
    /// The reply was not valid HTTP.
    case protocolError
    /// The response's headers passed libcurl's limit (``TransferFailure/headerLimit`` bytes): libcurl
    /// 7.88 reports it as CURLE_OUT_OF_MEMORY once the request was sent, which is no memory shortage of
    /// this process.
    case headersTooLarge
    /// A 3xx answer to a transfer that does not follow redirects: `location` is the absolute target.
    case redirect(location: String)
    /// Anything else; the outcome's `diagnostic` says what libcurl reported.
    case other

    /// The most response header bytes libcurl takes (CURL_MAX_HTTP_HEADER, 100 KiB).
    package static let headerLimit = 100 * 1024
}
