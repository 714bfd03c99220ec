import AssetServer
import RichPush

extension Fixtures {
    /// Download limits that trust the test CA and send cdn.example.com:443 to the server's HTTPS port.
    public static func fetchPolicy(mapping server: AssetServer) -> FetchPolicy {
        var policy = FetchPolicy()
        policy.caFile = caFile
        policy.hostMappings = [
            HostMapping(
                host: "cdn.example.com", port: "443", targetHost: "127.0.0.1", targetPort: "\(server.httpsPort ?? 0)")
        ]
        return policy
    }

    /// The extension's policy with that mapping and a budget.
    public static func extensionPolicy(mapping server: AssetServer, budget: Duration) -> ExtensionPolicy {
        var policy = ExtensionPolicy()
        policy.budget = budget
        policy.fetch = fetchPolicy(mapping: server)
        return policy
    }
}
