import CCurlShim
import Foundation
import Testing

@testable import CurlKit

/// Every libcurl result the engine can see, decided by the pure classification: one row per result.
@Suite struct TransferClassificationTests {
    static let start = ContinuousClock.now

    /// Facts for `code`, with a deadline 10 s after ``start`` and the transfer ending at `elapsed`.
    static func facts(
        _ code: CURLcode, url: String = "https://cdn.example.com/a.jpg", status: Int = 0,
        elapsed: Duration = .seconds(1), hopConnected: Bool = true, lowSpeedSeconds: Int = 0,
        followRedirects: Bool = true, redirectTarget: String = "", redirectURL: String = "", osErrno: Int = 0,
        capExceeded: Bool = false, writeErrno: Int32 = 0, allowed: String = "https"
    ) -> TransferFacts {
        let spec = TransferSpec(
            url: url, schemes: Set(allowed.split(separator: ",").map(String.init)), deadline: start + .seconds(10),
            lowSpeedSeconds: lowSpeedSeconds,
            followRedirects: followRedirects)
        return TransferFacts(
            code: code, spec: spec, status: status, capExceeded: capExceeded, writeErrno: writeErrno,
            hopConnected: hopConnected, redirectTarget: redirectTarget, redirectURL: redirectURL, osErrno: osErrno,
            now: start + elapsed)
    }

    /// libcurl 7.88 reports response headers over its 100 KB limit as CURLE_OUT_OF_MEMORY: once the
    /// request was sent that is the server's answer, before it a real allocation failure.
    @Test func outOfMemoryAfterTheRequestIsHeadersTooLarge() {
        #expect(
            TransferClassification.classify(Self.facts(CURLE_OUT_OF_MEMORY, status: 200)) == .headersTooLarge)
        #expect(TransferClassification.classify(Self.facts(CURLE_OUT_OF_MEMORY, hopConnected: false)) == .other)
    }

    @Test func successIsDecidedByTheStatus() {
        #expect(TransferClassification.classify(Self.facts(CURLE_OK, status: 200)) == nil)
        #expect(TransferClassification.classify(Self.facts(CURLE_OK, status: 204)) == nil)
        #expect(TransferClassification.classify(Self.facts(CURLE_OK, status: 404)) == .httpStatus)
        // A 3xx not followed is a redirect the caller decides on; without a Location it is a status.
        #expect(
            TransferClassification.classify(
                Self.facts(CURLE_OK, status: 302, followRedirects: false, redirectURL: "https://b/x"))
                == .redirect(location: "https://b/x"))
        #expect(
            TransferClassification.classify(Self.facts(CURLE_OK, status: 302, followRedirects: false)) == .httpStatus)
    }

    @Test func aTimeoutIsTheDeadlineAConnectTimeoutOrAStall() {
        // At (or within curl's timer slack of) the deadline: the deadline, whatever the connection.
        #expect(
            TransferClassification.classify(Self.facts(CURLE_OPERATION_TIMEDOUT, elapsed: .seconds(10)))
                == .deadlineExceeded)
        #expect(
            TransferClassification.classify(Self.facts(CURLE_OPERATION_TIMEDOUT, elapsed: .milliseconds(9_990)))
                == .deadlineExceeded)
        // Before it: a connection never up timed out connecting; one that was up stalled (with a stall window).
        #expect(
            TransferClassification.classify(Self.facts(CURLE_OPERATION_TIMEDOUT, hopConnected: false))
                == .connectTimeout)
        #expect(
            TransferClassification.classify(Self.facts(CURLE_OPERATION_TIMEDOUT, lowSpeedSeconds: 3)) == .stalled)
        #expect(TransferClassification.classify(Self.facts(CURLE_OPERATION_TIMEDOUT)) == .deadlineExceeded)
    }

    @Test func anUnsupportedProtocolIsTheURLsTheRedirectsOrAReplyThatIsNotHTTP() {
        #expect(
            TransferClassification.classify(Self.facts(CURLE_UNSUPPORTED_PROTOCOL, url: "ftp://h/a.jpg"))
                == .schemeRefused)
        #expect(
            TransferClassification.classify(
                Self.facts(CURLE_UNSUPPORTED_PROTOCOL, redirectTarget: "file:///etc/passwd"))
                == .redirectRefused(target: "file:///etc/passwd"))
        #expect(
            TransferClassification.classify(
                Self.facts(CURLE_UNSUPPORTED_PROTOCOL, redirectTarget: "http://h/a.jpg"))
                == .redirectRefused(target: "http://h/a.jpg"))
        // http allowed: the redirect is fine, so curl's code meant a reply that is not HTTP.
        #expect(
            TransferClassification.classify(
                Self.facts(CURLE_UNSUPPORTED_PROTOCOL, redirectTarget: "http://h/a.jpg", allowed: "http,https"))
                == .protocolError)
        #expect(TransferClassification.classify(Self.facts(CURLE_UNSUPPORTED_PROTOCOL)) == .protocolError)
    }

    @Test(arguments: [
        (CURLE_URL_MALFORMAT, TransferFailure.malformedURL),
        (CURLE_COULDNT_RESOLVE_HOST, .dnsFailed), (CURLE_COULDNT_RESOLVE_PROXY, .dnsFailed),
        (CURLE_COULDNT_CONNECT, .connectFailed),
        (CURLE_SSL_CONNECT_ERROR, .tlsFailed), (CURLE_PEER_FAILED_VERIFICATION, .tlsFailed),
        (CURLE_SSL_CACERT_BADFILE, .tlsFailed), (CURLE_SSL_CIPHER, .tlsFailed), (CURLE_SSL_CERTPROBLEM, .tlsFailed),
        (CURLE_SSL_ISSUER_ERROR, .tlsFailed), (CURLE_SSL_PINNEDPUBKEYNOTMATCH, .tlsFailed),
        (CURLE_USE_SSL_FAILED, .tlsFailed),
        (CURLE_TOO_MANY_REDIRECTS, .tooManyRedirects), (CURLE_FILESIZE_EXCEEDED, .declaredTooLarge),
        (CURLE_HTTP_RETURNED_ERROR, .httpStatus), (CURLE_PARTIAL_FILE, .truncated),
        (CURLE_GOT_NOTHING, .connectionReset), (CURLE_SEND_ERROR, .connectionReset),
        (CURLE_RECV_ERROR, .connectionReset),
        (CURLE_WEIRD_SERVER_REPLY, .protocolError), (CURLE_HTTP2, .protocolError),
        (CURLE_BAD_CONTENT_ENCODING, .protocolError), (CURLE_HTTP3, .protocolError),
        (CURLE_ABORTED_BY_CALLBACK, .engineStopped),
        (CURLE_OUT_OF_MEMORY, .headersTooLarge), (CURLE_FAILED_INIT, .other), (CURLE_READ_ERROR, .other),
    ])
    func eachResultHasItsFailure(code: CURLcode, failure: TransferFailure) {
        #expect(TransferClassification.classify(Self.facts(code)) == failure, "CURLcode \(code.rawValue)")
    }

    @Test func theSystemsErrorAndTheSinkDecideWhoseFaultItIs() {
        #expect(
            TransferClassification.classify(Self.facts(CURLE_COULDNT_CONNECT, osErrno: Int(EMFILE)))
                == .outOfDescriptors)
        #expect(
            TransferClassification.classify(Self.facts(CURLE_COULDNT_CONNECT, osErrno: Int(ENFILE)))
                == .outOfDescriptors)
        #expect(
            TransferClassification.classify(Self.facts(CURLE_COULDNT_CONNECT, osErrno: Int(ECONNREFUSED)))
                == .connectFailed)
        #expect(TransferClassification.classify(Self.facts(CURLE_WRITE_ERROR, capExceeded: true)) == .capExceeded)
        #expect(
            TransferClassification.classify(Self.facts(CURLE_WRITE_ERROR, writeErrno: ENOSPC))
                == .writeFailed(errno: ENOSPC))
    }
}
