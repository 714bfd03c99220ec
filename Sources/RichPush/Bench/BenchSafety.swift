import Foundation

/// Guards a bench against loading hosts it should not, and against running out of descriptors.
package enum BenchSafety {
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
