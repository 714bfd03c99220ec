import CurlKit
import Foundation

/// Which TLS failure a `tls-failed` download met: a stable, payload-free name beside the reason code.
///
/// The reason stays `tls-failed` (the stable vocabulary reports tally); this detail says what to fix.
/// Its text never changes once released. JSON: `tls_problem`.
package struct TLSProblem: Hashable, Sendable, CustomStringConvertible, Codable {
    private enum Base: String, Sendable {
        case hostnameMismatch = "hostname-mismatch"
        case unknownIssuer = "unknown-issuer"
        case incompleteChain = "incomplete-chain"
        case expired = "expired"
        case notYetValid = "not-yet-valid"
        case selfSigned = "self-signed"
        case protocolRefused = "protocol-refused"
        case caFileUnusable = "ca-file-unusable"
        case other = "other"
    }

    private let base: Base
    private init(_ base: Base) { self.base = base }

    /// The certificate does not hold the URL's host name.
    package static let hostnameMismatch = TLSProblem(.hostnameMismatch)
    /// No trusted certificate signs the chain (OpenSSL: unable to get local issuer certificate).
    package static let unknownIssuer = TLSProblem(.unknownIssuer)
    /// The server does not send the intermediate certificate its certificate was issued under.
    package static let incompleteChain = TLSProblem(.incompleteChain)
    /// A certificate of the chain has expired.
    package static let expired = TLSProblem(.expired)
    /// A certificate of the chain is not valid yet.
    package static let notYetValid = TLSProblem(.notYetValid)
    /// The server's certificate, or the root of the chain it sends, signs itself and is not trusted.
    package static let selfSigned = TLSProblem(.selfSigned)
    /// The server and the client share no TLS version, cipher or parameters (handshake refused).
    package static let protocolRefused = TLSProblem(.protocolRefused)
    /// The trusted certificates (the system bundle or the CA file) could not be read.
    package static let caFileUnusable = TLSProblem(.caFileUnusable)
    /// Any other TLS failure (the cause carries libcurl's words).
    package static let other = TLSProblem(.other)

    /// Every problem, in documentation order.
    package static let all: [TLSProblem] = [
        .hostnameMismatch, .unknownIssuer, .incompleteChain, .expired, .notYetValid, .selfSigned, .protocolRefused,
        .caFileUnusable, .other,
    ]

    /// The stable kebab-case name, for example `hostname-mismatch`.
    package var description: String { base.rawValue }

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let base = Base(rawValue: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: text))
        }
        self.base = base
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(base.rawValue)
    }

    init(diagnosed problem: TLSDiagnosis.Problem) {
        switch problem {
        case .hostnameMismatch: self = .hostnameMismatch
        case .unknownIssuer: self = .unknownIssuer
        case .incompleteChain: self = .incompleteChain
        case .expired: self = .expired
        case .notYetValid: self = .notYetValid
        case .selfSigned: self = .selfSigned
        case .protocolRefused: self = .protocolRefused
        case .trustStoreUnreadable: self = .caFileUnusable
        case .other: self = .other
        }
    }
}

/// The words of a `tls-failed` download: a message that says what the handshake showed, and a hint
/// that fits the problem (the CA-file hint only where trusting another CA can help).
struct TLSFailureText {
    var problem: TLSProblem
    var message: String
    var hint: String?

    /// The text for a TLS failure of `url` under `policy`, from what the handshake showed.
    init(_ diagnosis: TLSDiagnosis?, url: String, policy: FetchPolicy) {
        let host = URLComponents(string: url)?.host.flatMap { $0.isEmpty ? nil : $0 } ?? url
        let diagnosis = diagnosis ?? TLSDiagnosis(problem: .other)
        problem = TLSProblem(diagnosed: diagnosis.problem)
        func quoted(_ name: String?) -> String { name.map { "'\($0)'" } ?? "its issuer" }
        let certificate = diagnosis.failedSubject.map { "the certificate '\($0)'" } ?? "a certificate"
        let trustWords =
            policy.caFile.map { "the CA file \($0) does not hold it either" } ?? "no CA file was given besides them"
        switch diagnosis.problem {
        case .hostnameMismatch:
            let names = diagnosis.names.isEmpty ? "" : " (it holds: \(diagnosis.names.joined(separator: ", ")))"
            message = "the certificate of \(url) does not hold the host name \(host)\(names)"
            hint =
                "the certificate is trusted but issued for other names: use a URL whose host it names, or have the "
                + "server send a certificate for \(host); trusting another CA does not help"
        case .unknownIssuer:
            message =
                "no trusted certificate signs \(certificate) of \(url): its issuer \(quoted(diagnosis.failedIssuer)) "
                + "is not in the system's CA bundle, and \(trustWords)"
            hint =
                "if the server's certificate comes from your own CA, trust a CA file that holds "
                + "\(quoted(diagnosis.failedIssuer)); if that is an intermediate, the server must send it after its "
                + "certificate"
        case .incompleteChain:
            message =
                "the server of \(url) does not send the intermediate certificate \(quoted(diagnosis.failedIssuer)) "
                + "that \(certificate) was issued under (an incomplete chain)"
            hint =
                "configure the server to send its certificate followed by the intermediates (the full chain); "
                + "the missing one is published at \(diagnosis.issuerURL ?? "the URL the certificate names")"
        case .expired:
            message = "\(certificate) of \(url) expired on \(diagnosis.notAfter ?? "an earlier date")"
            hint = "renew the certificate on the server (and check that this machine's clock is right)"
        case .notYetValid:
            message = "\(certificate) of \(url) is not valid before \(diagnosis.notBefore ?? "a later date")"
            hint = "check this machine's clock, and the dates the server's certificate was issued with"
        case .selfSigned:
            message =
                diagnosis.errorDepth == 0
                ? "\(url) presents a self-signed certificate (\(diagnosis.failedSubject ?? "no subject")) that is not trusted"
                : "the chain \(url) sends ends in the self-signed certificate \(quoted(diagnosis.failedSubject)), "
                    + "which is not trusted"
            hint =
                "if that certificate is your own, trust a CA file that holds it (a phone trusts it only once it is "
                + "installed and trusted in its settings); otherwise the server sends the wrong chain"
        case .protocolRefused:
            let side = diagnosis.alertFromServer ? "the server" : "richpush"
            let what =
                diagnosis.alert == 70
                ? "no TLS version that both accept (\(side) sent the protocol_version alert)"
                : "no TLS version, cipher or parameters that both accept (\(side) refused the handshake)"
            let minimum = policy.transportSecurity == nil && policy.requireTLS12 ? " (TLS 1.2 or newer required)" : ""
            message = "TLS with the host of \(url) failed: \(what)\(minimum)"
            hint =
                "App Transport Security needs TLS 1.2 or newer with forward-secret ciphers: upgrade the server, or "
                + "give the host an NSExceptionMinimumTLSVersion exception in the extension's Info.plist"
        case .trustStoreUnreadable:
            message = "the trusted certificates for \(url) cannot be read"
            hint = "give a CA file in PEM form that holds at least one certificate"
        case .other:
            message = "TLS with the host of \(url) failed"
            if let text = diagnosis.verifyText { message += ": \(text)" }
            hint = nil
        }
    }
}
