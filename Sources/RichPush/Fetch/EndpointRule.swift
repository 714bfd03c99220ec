import Foundation

/// Where richpush's own requests may go, decided in one place: the `/users/track` endpoint
/// (`--track-endpoint`, `analytics flush --endpoint`) and the SDKs' calls (`--sdk-endpoint`) go over
/// https, or over plain http to 127.0.0.1 only (`richpush serve` answers both); and whether a URL's
/// connection stays on this machine once the host mappings are applied (bench's safety check and its
/// redirects).
package enum EndpointRule {
    /// Why `url` cannot be such an endpoint, as a predicate ("must be https ..."); nil when it can.
    package static func problem(with url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else { return "is not a URL with a host" }
        guard scheme == "https" || (scheme == "http" && host == "127.0.0.1") else {
            return "must be https (plain http only to 127.0.0.1, for richpush serve)"
        }
        return nil
    }

    /// Whether the connection for `url` goes to this machine, after the host mappings.
    package static func isLoopback(url: String, mappings: [HostMapping]) -> Bool {
        guard let components = URLComponents(string: url), let host = components.host?.lowercased() else {
            return false
        }
        let port = components.port.map(String.init) ?? (components.scheme?.lowercased() == "http" ? "80" : "443")
        var target = host
        if let mapping = mappings.first(where: {
            ($0.host.isEmpty || $0.host.lowercased() == host) && ($0.port.isEmpty || $0.port == port)
        }), !mapping.targetHost.isEmpty {
            target = mapping.targetHost.lowercased()
        }
        target = target.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return target == "localhost" || target == "::1" || target.hasPrefix("127.")
    }
}
