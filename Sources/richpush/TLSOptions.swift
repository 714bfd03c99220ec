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

    static let help = """
          --connect-timeout SEC   Time allowed for DNS, TCP and TLS (default 10).
          --allow-http            Emulate an extension whose Info.plist allows arbitrary loads;
                                  without it, App Transport Security blocks http:// URLs.
          --cacert FILE           Trust this CA (PEM) besides the system's; verification is never off
                                  (the test CA is Samples/certs/ca.pem).
          --connect-to H:P:H2:P2  Send connections for H:P to H2:P2, as curl does. Repeatable.
          --max-redirs N          Redirects followed at most (default 5).
          --max-bytes N           Refuse bodies larger than N bytes (default: Apple's cap for the type).
          --stall-window SECONDS  Fail when under 1 byte/s arrives for this long (default: off).
          --reuse                 Share connections between downloads (default: a fresh one each).
          --network PROFILE       Download over an emulated network (3g, lte, edge, wifi, very-bad, ... or
                                  down=2mbit,rtt=150ms,loss=1%,jitter=20ms); see 'richpush network list'.
        """

    /// The help line of `--network-mix` (batch and bench).
    static let mixHelp = """
          --network-mix MIX       Give each device a built-in profile by share, drawn with --seed:
                                  3g=20,lte=70,wifi=10 (percentages summing to 100); not with --network.
        """

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
        guard let text = try arguments.value("--network-mix") else { return nil }
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
        if let network = try arguments.value("--network") {
            do throws(NetworkError) { policy.network = try NetworkProfile(parsing: network) } catch {
                throw UsageError("--network: \(error.message)")
            }
        }
        policy.allowHTTP = arguments.flag("--allow-http")
        if arguments.flag("--reuse") { policy.connections = .shared }
        if let seconds: Double = try arguments.number("--connect-timeout", in: 0.001...3600) {
            policy.connectTimeout = .milliseconds(Int64(seconds * 1000))
        }
        if let seconds: Double = try arguments.number("--stall-window", in: 1...3600) {
            policy.stallWindow = .milliseconds(Int64(seconds * 1000))
        }
        policy.maxBytes = try arguments.number("--max-bytes", in: 0...Int64.max)
        policy.maxRedirects = try arguments.number("--max-redirs", in: 0...50) ?? policy.maxRedirects
        if let caFile = try arguments.value("--cacert") {
            // Readable and holding a certificate: a file without one would fail every download as tls-failed.
            do throws(CertificateAuthorityFile.Failure) { _ = try CertificateAuthorityFile.check(caFile) } catch {
                throw CommandFailure(.dataError, "--cacert: \(error.message)")
            }
            policy.caFile = caFile
        }
        do {
            policy.hostMappings = try arguments.values("--connect-to").map { text throws in
                try HostMapping(parsing: text)
            }
        } catch let error as FetchError {
            throw UsageError("--connect-to \(error.message)")
        }
    }
}
