import Foundation

/// Turns a request's host mappings (``HostMapping``) into mappings that pass through a shaping relay.
///
/// Each rule keeps what it matches and connects to the relay's route for its target instead; the
/// URL's own host and port, when no rule matches them, get a rule of their own. Redirects to a
/// host no rule names are not shaped (the relay only knows the targets it was given).
enum RelayRouting {
    /// The rules for `url` under `mappings`, through `relay`.
    static func rules(for url: String, mappings: [HostMapping], relay: NetworkRelay) throws(NetworkError)
        -> [HostMapping]
    {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else {
            // curl reports the malformed URL; nothing to route.
            return mappings
        }
        let port = components.port ?? (scheme == "http" ? 80 : 443)
        var rules: [HostMapping] = []
        var matched = false
        for mapping in mappings {
            let targetHost =
                mapping.targetHost.isEmpty ? (mapping.host.isEmpty ? host : mapping.host) : mapping.targetHost
            let targetPort =
                Int(
                    mapping.targetPort.isEmpty
                        ? (mapping.port.isEmpty ? String(port) : mapping.port) : mapping.targetPort)
                ?? port
            let relayPort = try relay.route(toHost: targetHost, port: targetPort)
            rules.append(
                HostMapping(
                    host: mapping.host, port: mapping.port, targetHost: "127.0.0.1", targetPort: String(relayPort)))
            let hostMatches = mapping.host.isEmpty || Self.bare(mapping.host).lowercased() == host.lowercased()
            let portMatches = mapping.port.isEmpty || Int(mapping.port) == port
            matched = matched || (hostMatches && portMatches)
        }
        if !matched {
            let relayPort = try relay.route(toHost: host, port: port)
            let name = host.contains(":") ? "[\(host)]" : host
            rules.append(
                HostMapping(host: name, port: String(port), targetHost: "127.0.0.1", targetPort: String(relayPort)))
        }
        return rules
    }

    private static func bare(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }
}
