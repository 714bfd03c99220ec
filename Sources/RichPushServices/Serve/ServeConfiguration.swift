import Foundation
import RichPush

/// Everything `richpush serve` is told: the folder, the addresses, the HTTPS certificate and key files,
/// and whether `/users/track` is answered.
///
/// ``init(folder:samples:tls:certificate:key:)`` checks the folder and the certificate files' pairing
/// before the server starts; the command line loads the files and starts the embedded server from it.
///
/// ```swift
/// let configuration = try ServeConfiguration(
///     folder: "Samples/assets", samples: "Samples", tls: true, certificate: nil, key: nil)
/// configuration.tlsFiles?.certificate   // "Samples/certs/server.pem"
/// ```
package struct ServeConfiguration: Sendable {
    /// How `POST /users/track` is answered: the REST key it accepts, a log of accepted objects, a rate limit.
    package struct UsersTrack: Sendable, Equatable {
        /// The REST API key requests must carry.
        package var apiKey: String
        /// Every accepted object is appended there, one JSON line each.
        package var logPath: String?
        /// Requests accepted per window; more get 429.
        package var limit = 20
        /// The window's length in seconds.
        package var windowSeconds = 1

        package init(apiKey: String, logPath: String? = nil) {
            self.apiKey = apiKey
            self.logPath = logPath
        }

        /// Reads the key file, the log and the limit `N[/S]`; nil when /users/track is not served.
        ///
        /// A key file that cannot be read or holds no key is `unusable-input`; a limit that is not N or
        /// N/SECONDS, and a log or limit without a key file, are `invalid-value`/`invalid-combination`.
        package static func parse(keyFile: String?, logPath: String?, limit: String?) throws(ConfigurationError)
            -> UsersTrack?
        {
            guard let keyFile else {
                if logPath != nil || limit != nil {
                    throw ConfigurationError(
                        .invalidCombination, "\(Setting.trackLog) and \(Setting.trackLimit) need \(Setting.apiKeyFile)")
                }
                return nil
            }
            let key = try APIKey.read(file: keyFile)
            var options = UsersTrack(apiKey: key, logPath: logPath)
            if let limit {
                let parts = limit.split(separator: "/", omittingEmptySubsequences: false)
                guard (1...2).contains(parts.count), let count = Int(parts[0]), count > 0,
                    let seconds = parts.count == 2 ? Int(parts[1]) : 1, (1...3600).contains(seconds)
                else {
                    throw ConfigurationError.invalid(
                        .trackLimit, "takes N or N/SECONDS (for example 3000/3), not '\(limit)'")
                }
                options.limit = count
                options.windowSeconds = seconds
            }
            return options
        }
    }

    /// The certificate chain and private key files (PEM) for HTTPS.
    package struct TLSFiles: Sendable, Equatable {
        package var certificate: String
        package var key: String
    }

    /// The folder of assets served.
    package var root: String
    /// The IPv4 address to bind.
    package var host = Self.defaultHost
    /// The address bound when none is given: this machine only.
    package static let defaultHost = "127.0.0.1"
    /// The HTTP port (0: any free port).
    package var httpPort: UInt16 = 0
    /// The HTTPS port (0: any free port).
    package var httpsPort: UInt16 = 0
    /// The files of the HTTPS identity; nil serves plain HTTP only.
    package var tlsFiles: TLSFiles?
    /// `/users/track`, when served.
    package var usersTrack: UsersTrack?
    /// The most connections one client address holds per listener (nil: the
    /// server's default, the connection limit less an eighth).
    package var perAddressLimit: Int?
    /// How long a new connection has for its TLS handshake and whole request head
    /// (nil: the server's default, 10 s).
    package var headTimeout: Duration?
    /// Whether a query parameter no fault reads is a 400 (`--strict-faults`); by default it is ignored,
    /// as a CDN ignores cache busters, `utm_*` tags and signatures, and the access log notes it.
    package var strictFaults = false
    /// The repository's `Samples/` folder, when found: the default folder and the test certificate.
    package var samples: String?

    /// A configuration for `folder` (default `<samples>/assets`) and, when `tls`, the certificate and
    /// key (default: the samples' test pair).
    ///
    /// No folder and no samples, and a certificate without its key (or the reverse) are
    /// `invalid-combination`; a folder that does not exist or is not a folder is `unusable-input`.
    package init(folder: String?, samples: String?, tls: Bool, certificate: String?, key: String?)
        throws(ConfigurationError)
    {
        guard let root = folder ?? samples.map({ $0 + "/assets" }) else {
            throw ConfigurationError(
                .invalidCombination, "no folder given and no Samples/assets here: give the folder of assets to serve")
        }
        try Self.requireFolder(root)
        self.root = root
        self.samples = samples
        guard tls else { return }
        switch (certificate, key) {
        case (let certificate?, let key?):
            tlsFiles = TLSFiles(certificate: certificate, key: key)
        case (_?, nil):
            throw ConfigurationError(
                .invalidCombination,
                "\(Setting.certificate) needs \(Setting.privateKey) (the private key of that certificate), or pass \(Setting.noTLS)"
            )
        case (nil, _?):
            throw ConfigurationError(
                .invalidCombination,
                "\(Setting.privateKey) needs \(Setting.certificate) (the certificate chain for that key), or pass \(Setting.noTLS)"
            )
        case (nil, nil):
            guard let samples else {
                throw ConfigurationError(
                    .invalidCombination,
                    "HTTPS needs \(Setting.certificate) FILE and \(Setting.privateKey) FILE (no Samples/certs here), or pass \(Setting.noTLS)"
                )
            }
            tlsFiles = TLSFiles(certificate: samples + "/certs/server.pem", key: samples + "/certs/server-key.pem")
        }
    }

    /// `unusable-input` unless `path` is a folder: the input a server or a bench serves.
    package static func requireFolder(_ path: String) throws(ConfigurationError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ConfigurationError(
                .unusableInput, "'\(path.escapingControlCharacters)' does not exist: give the folder of assets to serve"
            )
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw ConfigurationError(
                .unusableInput,
                "'\(path.escapingControlCharacters)' is not a folder: give the folder of assets to serve")
        }
    }

    /// What the server prints on stderr once it listens, one note a line: the folder, how to trust
    /// the test certificate when it is in use, /users/track, and the fault modes.
    package var startNotes: [String] {
        var notes = ["serving \(root)"]
        if let samples, tlsFiles?.certificate == samples + "/certs/server.pem" {
            notes.append("HTTPS uses the test certificate; trust it with \(Setting.caFile) \(samples)/certs/ca.pem")
        }
        if usersTrack != nil { notes.append("POST /users/track answers like Braze's REST API") }
        return notes
    }
}
