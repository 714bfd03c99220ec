import Testing

@testable import RichPush

/// How a request's `--connect-to` rules are rewritten to pass through a relay.
@Suite struct RelayRoutingTests {
    let relay: NetworkRelay

    init() throws { relay = try NetworkRelay(profile: try NetworkProfile(parsing: "down=1mbit")) }

    @Test func aMappedHostConnectsToTheRelayRouteForItsTarget() throws {
        defer { relay.stop() }
        let mapping = HostMapping(host: "cdn.example.com", port: "443", targetHost: "127.0.0.1", targetPort: "8443")
        let rules = try RelayRouting.rules(
            for: "https://cdn.example.com/a.jpg", mappings: [mapping], relay: relay)
        let port = try relay.route(toHost: "127.0.0.1", port: 8443)
        #expect(
            rules == [HostMapping(host: "cdn.example.com", port: "443", targetHost: "127.0.0.1", targetPort: "\(port)")]
        )
    }

    @Test func anUnmappedURLGetsARuleOfItsOwnAfterTheOthers() throws {
        defer { relay.stop() }
        let other = HostMapping(host: "img.example.com", port: "443", targetHost: "127.0.0.1", targetPort: "9443")
        let rules = try RelayRouting.rules(for: "http://127.0.0.1:8080/a.jpg", mappings: [other], relay: relay)
        #expect(rules.count == 2)
        let mapped = try relay.route(toHost: "127.0.0.1", port: 9443)
        #expect(rules[0].host == "img.example.com" && rules[0].targetPort == "\(mapped)")
        let own = try relay.route(toHost: "127.0.0.1", port: 8080)
        #expect(rules[1] == HostMapping(host: "127.0.0.1", port: "8080", targetHost: "127.0.0.1", targetPort: "\(own)"))
        #expect(own != Int(rules[0].targetPort), "one route per target")
    }

    @Test func aRuleThatKeepsTheHostOrPortTakesThemFromTheURL() throws {
        defer { relay.stop() }
        // HOST2 empty: keep the original host; PORT empty: any port.
        let mapping = HostMapping(host: "127.0.0.1", port: "", targetHost: "", targetPort: "7443")
        let rules = try RelayRouting.rules(for: "https://127.0.0.1:443/a.jpg", mappings: [mapping], relay: relay)
        let port = try relay.route(toHost: "127.0.0.1", port: 7443)
        #expect(rules == [HostMapping(host: "127.0.0.1", port: "", targetHost: "127.0.0.1", targetPort: "\(port)")])
    }

    @Test func aMalformedURLIsLeftToCurl() throws {
        defer { relay.stop() }
        #expect(try RelayRouting.rules(for: "not a url", mappings: [], relay: relay).isEmpty)
    }
}
