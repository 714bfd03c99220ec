import Foundation
import RichPush

/// The options of every command that downloads: trust, host mappings, ATS, timeouts and caps.
///
/// ```swift
/// var arguments = Arguments(["--cacert", "ca.pem", "--allow-http"])
/// let fetch = try TLSOptions(parsing: &arguments).policy   // a FetchPolicy
/// ```
struct TLSOptions {
    /// The fetch policy the options describe (defaults for what was not given).
    var policy = FetchPolicy()
    /// Whether `--user-agent` was given (the app's bundle, from `--app`, names the default otherwise).
    var userAgentGiven = false

    /// The command line's words for a TLS problem that trusting a CA would fix (the library names no
    /// flag): nil for the others (the name, the dates, the chain, the protocol).
    static func advice(for problem: TLSProblem?, caFile: String?) -> String? {
        guard problem == .unknownIssuer || problem == .selfSigned else { return nil }
        return caFile == nil
            ? "richpush: if the server's certificate comes from your own CA, pass it with --cacert FILE (PEM)."
            : "richpush: --cacert \(caFile?.escapingControlCharacters ?? "") does not sign the server's certificate; "
                + "give the CA that does."
    }

    /// Reads `--network-mix MIX` (batch and bench), which cannot be given with `--network`.
    static func networkMix(_ arguments: inout Arguments, network: NetworkProfile?) throws -> NetworkMix? {
        guard let text = try arguments.read(Keys.networkMix) else { return nil }
        guard network == nil else {
            throw UsageError("give --network or --network-mix, not both (a mix names each device's profile)")
        }
        do throws(NetworkError) { return try NetworkMix(parsing: text) } catch {
            throw UsageError("--network-mix: \(error.message)")
        }
    }

    /// Reads the options out of `arguments`; a `--cacert` file that is missing or holds no
    /// certificate is unusable input (65).
    init(parsing arguments: inout Arguments) throws {
        if let network = try arguments.read(Keys.network) {
            do throws(NetworkError) { policy.network = try NetworkProfile(parsing: network) } catch {
                throw UsageError("--network: \(error.message)")
            }
        }
        policy.allowHTTP = try arguments.read(Keys.allowHTTP)
        if try arguments.read(Keys.reuse) { policy.connections = .shared }
        if let seconds = try arguments.read(Keys.connectTimeout) {
            policy.connectTimeout = .milliseconds(Int64(seconds * 1000))
        }
        if let seconds = try arguments.read(Keys.stallWindow) {
            policy.stallWindow = .milliseconds(Int64(seconds * 1000))
        }
        policy.maxBytes = try arguments.read(Keys.maxBytes)
        policy.maxRedirects = try arguments.read(Keys.maxRedirects) ?? policy.maxRedirects
        if let caFile = try arguments.read(Keys.caFile) {
            // Readable and holding a certificate: a file without one would fail every download as tls-failed.
            try CertificateAuthorityFile.checkOption(caFile)
            policy.caFile = caFile
        }
        for text in try arguments.read(Keys.header) {
            do throws(RequestHeader.Failure) { policy.requestHeaders.append(try RequestHeader(parsing: text)) } catch {
                throw UsageError("-H/--header: \(error.message)")
            }
        }
        if let agent = try arguments.read(Keys.userAgent) {
            guard !agent.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
                throw UsageError(
                    "--user-agent '\(agent.escapingControlCharacters)' holds CR, LF or NUL: a header is one line")
            }
            policy.userAgent = agent
            userAgentGiven = true
        }
        policy.hostMappings = try HostMapping.parsing(option: try arguments.read(Keys.connectTo))
    }
}
