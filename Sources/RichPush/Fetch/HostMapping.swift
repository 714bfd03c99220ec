/// A host mapping, as curl does: requests for HOST:PORT connect to HOST2:PORT2 instead.
///
/// The URL, the Host header, TLS SNI and certificate checks all keep the original name; only the
/// TCP connection goes elsewhere. That is how a payload with `https://cdn.example.com/a.jpg` is
/// served by a local server while certificate verification still checks `cdn.example.com`.
/// As in curl, an empty HOST or PORT matches any, and an empty HOST2 or PORT2 keeps the original.
///
/// ```swift
/// let mapping = try HostMapping(parsing: "cdn.example.com:443:127.0.0.1:8443")
/// ```
public struct HostMapping: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: String
    public var targetHost: String
    public var targetPort: String

    public init(host: String, port: String, targetHost: String, targetPort: String) {
        self.host = host
        self.port = port
        self.targetHost = targetHost
        self.targetPort = targetPort
    }

    /// Parses `HOST:PORT:HOST2:PORT2`; IPv6 addresses go in brackets (`[::1]`).
    public init(parsing text: String) throws(FetchError) {
        var fields: [String] = []
        var rest = Substring(text)
        while fields.count < 4 {
            if rest.hasPrefix("[") {
                guard let close = rest.firstIndex(of: "]") else { break }
                fields.append(String(rest[...close]))
                rest = rest[rest.index(after: close)...]
            } else {
                let end = rest.firstIndex(of: ":") ?? rest.endIndex
                fields.append(String(rest[..<end]))
                rest = rest[end...]
            }
            if fields.count < 4 {
                guard rest.hasPrefix(":") else { break }
                rest = rest.dropFirst()
            }
        }
        guard fields.count == 4, rest.isEmpty,
            fields[1].allSatisfy(\.isNumber), fields[3].allSatisfy(\.isNumber)
        else {
            throw FetchError(
                .invalidHostMapping,
                "'\(text)' is not HOST:PORT:HOST2:PORT2 (for example cdn.example.com:443:127.0.0.1:8443)")
        }
        self.init(host: fields[0], port: fields[1], targetHost: fields[2], targetPort: fields[3])
    }

    /// `--connect-to` values, each parsed as ``init(parsing:)`` parses it; a malformed one is
    /// `invalid-value`, as every command that takes the option says it.
    package static func parsing(option values: [String]) throws(ConfigurationError) -> [HostMapping] {
        var mappings: [HostMapping] = []
        for value in values {
            do throws(FetchError) { mappings.append(try HostMapping(parsing: value)) } catch {
                throw ConfigurationError.invalid(.connectTo, error.message)
            }
        }
        return mappings
    }

    /// The rule as curl's CURLOPT_CONNECT_TO takes it.
    public var description: String { "\(host):\(port):\(targetHost):\(targetPort)" }
}
