import AssetServer
import RichPush

extension Fixtures {
    /// Download limits that trust the test CA and send cdn.example.com:443 to the server's HTTPS port.
    ///
    /// Under a sanitizer the connect timeout stretches (``Sanitizer/scaled(_:)``): hundreds of
    /// instrumented TLS handshakes at once take longer than the default allows.
    public static func fetchPolicy(mapping server: AssetServer) -> FetchPolicy {
        var policy = FetchPolicy()
        policy.connectTimeout = Sanitizer.scaled(policy.connectTimeout)
        policy.caFile = caFile
        policy.hostMappings = [
            HostMapping(
                host: "cdn.example.com", port: "443", targetHost: "127.0.0.1", targetPort: "\(server.httpsPort ?? 0)")
        ]
        return policy
    }

    /// The extension's policy with that mapping and a budget (stretched under a sanitizer).
    public static func extensionPolicy(mapping server: AssetServer, budget: Duration) -> ExtensionPolicy {
        var policy = ExtensionPolicy()
        policy.budget = Sanitizer.scaled(budget)
        policy.fetch = fetchPolicy(mapping: server)
        return policy
    }
}
