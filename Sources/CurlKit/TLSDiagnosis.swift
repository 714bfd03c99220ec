import CCurlShim
import Foundation

/// What a failed TLS handshake showed: which problem it was and the certificate facts that explain it.
///
/// Decided inside CurlKit from the `CURLcode`, OpenSSL's verify result (`X509_V_ERR_*`, as
/// `CURLINFO_SSL_VERIFYRESULT` reports it) and what the trust store's callbacks saw during the
/// handshake (the server's certificate, the certificate the chain failed at, the alerts), never from
/// libcurl's message text.
package struct TLSDiagnosis: Sendable, Equatable {
    /// The kinds of TLS failure a user can act on differently.
    package enum Problem: String, Sendable, CaseIterable {
        /// The certificate does not hold the URL's host name.
        case hostnameMismatch
        /// No trusted certificate signs the chain the server sent (unable to get local issuer).
        case unknownIssuer
        /// The server left out an intermediate certificate that its certificate names a place to fetch from.
        case incompleteChain
        /// A certificate of the chain has expired.
        case expired
        /// A certificate of the chain is not valid yet.
        case notYetValid
        /// The server's certificate, or the root of the chain it sent, signs itself and is not trusted.
        case selfSigned
        /// The server and the client agree on no TLS version, cipher or parameters.
        case protocolRefused
        /// The trusted certificates could not be read.
        case trustStoreUnreadable
        /// Anything else (the diagnostic says what libcurl reported).
        case other
    }

    package var problem: Problem
    /// OpenSSL's verify result (`X509_V_ERR_*`), 0 when the chain itself was fine.
    package var verifyResult: Int
    /// OpenSSL's words for ``verifyResult``, for people.
    package var verifyText: String?
    /// Where in the chain verification failed (0: the server's own certificate).
    package var errorDepth: Int
    /// The TLS alert received or sent during the handshake that ended it (70: protocol version, 40: handshake failure).
    package var alert: Int?
    /// Whether the server sent ``alert`` (true) or this client did.
    package var alertFromServer: Bool
    /// The server's certificate: its subject, issuer and subjectAltName names (DNS names and IP addresses).
    package var subject: String?
    package var issuer: String?
    package var names: [String]
    /// The certificate the chain failed at: subject, issuer, validity and where its issuer can be fetched.
    package var failedSubject: String?
    package var failedIssuer: String?
    package var notBefore: String?
    package var notAfter: String?
    package var issuerURL: String?

    package init(problem: Problem) {
        self.problem = problem
        verifyResult = 0
        errorDepth = 0
        alertFromServer = false
        names = []
    }
}

extension TLSDiagnosis {
    // OpenSSL's X509_V_ERR_* numbers (stable: they are part of its ABI and of curl's VERIFYRESULT).
    static let unableToGetIssuerCertificate = 2
    static let certificateNotYetValid = 9
    static let certificateHasExpired = 10
    static let depthZeroSelfSigned = 18
    static let selfSignedInChain = 19
    static let unableToGetIssuerLocally = 20
    static let unableToVerifyLeafSignature = 21
    static let hostnameMismatch = 62
    static let ipAddressMismatch = 64
    // TLS alert descriptions (RFC 8446 section 6).
    static let alertHandshakeFailure = 40
    static let alertProtocolVersion = 70
    static let alertInsufficientSecurity = 71

    /// The diagnosis of a transfer that ended with a TLS failure, from the sink's report.
    static func of(
        code: CURLcode, verifyResult curlVerifyResult: Int, report: rp_tls_report, host: String?
    ) -> TLSDiagnosis {
        var diagnosis = TLSDiagnosis(problem: .other)
        // The callbacks' own record first: libcurl 7.88 starts VERIFYRESULT at 1 ("unspecified") and sets
        // it only once the handshake is done, so a failed handshake or host check still reads 1.
        let unspecified = 1
        let verify =
            report.verify_error != 0
            ? Int(report.verify_error)
            : report.leaf != nil || curlVerifyResult == unspecified ? 0 : curlVerifyResult
        diagnosis.verifyResult = verify
        if verify != 0 { diagnosis.verifyText = String(cString: rp_verify_error_text(verify)) }
        diagnosis.errorDepth = Int(report.error_depth)
        if report.alert_read >= 0 {
            diagnosis.alert = Int(report.alert_read)
            diagnosis.alertFromServer = true
        } else if report.alert_written >= 0 {
            diagnosis.alert = Int(report.alert_written)
        }
        diagnosis.subject = text(report.leaf, rp_cert_subject)
        diagnosis.issuer = text(report.leaf, rp_cert_issuer)
        diagnosis.names = text(report.leaf, rp_cert_names)?.split(separator: "\n").map(String.init) ?? []
        let failed = report.failed ?? report.leaf
        diagnosis.failedSubject = text(failed, rp_cert_subject)
        diagnosis.failedIssuer = text(failed, rp_cert_issuer)
        diagnosis.notBefore = text(failed, rp_cert_not_before)
        diagnosis.notAfter = text(failed, rp_cert_not_after)
        diagnosis.issuerURL = text(failed, rp_cert_ca_issuers)
        diagnosis.problem = problem(
            code: code, verify: verify, issuerURL: diagnosis.issuerURL, alert: diagnosis.alert,
            hostMismatch: report.leaf != nil && host.map { rp_cert_matches_host(report.leaf, $0) == 0 } == true)
        return diagnosis
    }

    /// The one place a TLS failure becomes a ``Problem``.
    static func problem(code: CURLcode, verify: Int, issuerURL: String?, alert: Int?, hostMismatch: Bool) -> Problem {
        switch verify {
        case hostnameMismatch, ipAddressMismatch: return .hostnameMismatch
        case certificateHasExpired: return .expired
        case certificateNotYetValid: return .notYetValid
        case depthZeroSelfSigned, selfSignedInChain: return .selfSigned
        case unableToGetIssuerCertificate, unableToGetIssuerLocally, unableToVerifyLeafSignature:
            // A certificate that says where its issuer is published was issued under an intermediate the
            // server should have sent; one that does not (a private CA's) names an issuer nobody trusts here.
            return issuerURL?.isEmpty == false ? .incompleteChain : .unknownIssuer
        case 0:
            break
        default:
            return .other
        }
        // libcurl 7.88 checks the host name itself, after a handshake whose chain verified.
        if code == CURLE_PEER_FAILED_VERIFICATION && hostMismatch { return .hostnameMismatch }
        if code == CURLE_SSL_CONNECT_ERROR || code == CURLE_SSL_CIPHER {
            switch alert {
            case alertHandshakeFailure?, alertProtocolVersion?, alertInsufficientSecurity?: return .protocolRefused
            default: break
            }
            if code == CURLE_SSL_CIPHER { return .protocolRefused }
        }
        if code == CURLE_SSL_CACERT_BADFILE { return .trustStoreUnreadable }
        return .other
    }

    private static func text(_ certificate: UnsafeMutableRawPointer?, _ fact: rp_cert_fact) -> String? {
        guard let certificate, let value = rp_cert_text(certificate, fact) else { return nil }
        defer { free(value) }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}
