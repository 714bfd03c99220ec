import AssetServer
import RichPush

extension Fixtures {
    /// Download limits that trust the test CA and send cdn.example.com:443 to the server's HTTPS port.
    ///
    /// The connect timeout stretches with ``TimeScale``: hundreds of TLS handshakes at once on a loaded
    /// machine, or instrumented under a sanitizer, take longer than the default allows.
    package static func fetchPolicy(mapping server: AssetServer) -> FetchPolicy {
        var policy = FetchPolicy()
        policy.connectTimeout = TimeScale.scaled(policy.connectTimeout)
        policy.caFile = caFile
        policy.hostMappings = [
            HostMapping(
                host: "cdn.example.com", port: "443", targetHost: "127.0.0.1", targetPort: "\(server.httpsPort ?? 0)")
        ]
        return policy
    }

    /// The extension's policy with that mapping and a budget, stretched with ``TimeScale``: a test whose
    /// budget must run out against a server's delay scales the delay too, or sets its budget afterwards.
    package static func extensionPolicy(mapping server: AssetServer, budget: Duration) -> ExtensionPolicy {
        var policy = ExtensionPolicy()
        policy.budget = TimeScale.scaled(budget)
        policy.fetch = fetchPolicy(mapping: server)
        return policy
    }
}
