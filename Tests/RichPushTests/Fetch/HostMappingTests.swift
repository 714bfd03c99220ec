import RichPush
import Testing

@Suite struct HostMappingTests {
    @Test func parsesCurlConnectToSyntax() throws {
        let mapping = try HostMapping(parsing: "cdn.example.com:443:127.0.0.1:8443")
        #expect(
            mapping == HostMapping(host: "cdn.example.com", port: "443", targetHost: "127.0.0.1", targetPort: "8443"))
        #expect(mapping.description == "cdn.example.com:443:127.0.0.1:8443")
    }

    @Test func acceptsEmptyFieldsAndBracketedIPv6() throws {
        #expect(try HostMapping(parsing: "::127.0.0.1:").host == "")
        let v6 = try HostMapping(parsing: "cdn.example.com:443:[::1]:8443")
        #expect(v6.targetHost == "[::1]" && v6.targetPort == "8443")
    }

    @Test(arguments: ["", "a:b", "cdn.example.com:443:127.0.0.1", "h:443:t:80:extra", "h:port:t:80", "h:1:[::1:2"])
    func rejectsMalformedRules(text: String) {
        #expect(throws: FetchError.self) { try HostMapping(parsing: text) }
    }
}
