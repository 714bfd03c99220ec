import Foundation
import Testing

@testable import RichPush

/// App Transport Security decisions against the plist rules, table-driven.
@Suite struct AppTransportSecurityTests {
    static func ats(_ dictionary: [String: Any]) -> AppTransportSecurity { AppTransportSecurity(dictionary) }

    static var exceptions: [String: Any] {
        [
            "NSExceptionDomains": [
                "cdn.example.com": ["NSExceptionAllowsInsecureHTTPLoads": true],
                "example.org": ["NSIncludesSubdomains": true, "NSExceptionAllowsInsecureHTTPLoads": true],
                "legacy.example.net": ["NSExceptionMinimumTLSVersion": "TLSv1.0"],
                "strict.example.org": ["NSExceptionMinimumTLSVersion": "TLSv1.3"],
            ]
        ]
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let url: String
        let allowed: Bool
        let minimum: TLSVersion?
        var testDescription: String { url }
    }

    @Test(arguments: [
        Case(url: "https://img.example.net/a.jpg", allowed: true, minimum: .tls12),
        Case(url: "http://img.example.net/a.jpg", allowed: false, minimum: nil),
        Case(url: "http://cdn.example.com/a.jpg", allowed: true, minimum: .tls12),
        Case(url: "http://CDN.Example.COM/a.jpg", allowed: true, minimum: .tls12),
        // An exact entry without NSIncludesSubdomains covers no subdomain.
        Case(url: "http://eu.cdn.example.com/a.jpg", allowed: false, minimum: nil),
        Case(url: "http://example.org/a.jpg", allowed: true, minimum: .tls12),
        Case(url: "http://a.b.example.org/a.jpg", allowed: true, minimum: .tls12),
        // The most specific entry governs, and it does not allow http.
        Case(url: "http://strict.example.org/a.jpg", allowed: false, minimum: nil),
        Case(url: "https://strict.example.org/a.jpg", allowed: true, minimum: .tls13),
        Case(url: "https://legacy.example.net/a.jpg", allowed: true, minimum: .tls10),
        Case(url: "http://notexample.org/a.jpg", allowed: false, minimum: nil),
        Case(url: "ftp://cdn.example.com/a.jpg", allowed: false, minimum: nil),
    ])
    func decidesByTheExceptionDomains(_ test: Case) {
        let decision = Self.ats(Self.exceptions).decide(test.url)
        switch decision {
        case .allowed(let minimum, _):
            #expect(test.allowed, "\(decision)")
            #expect(minimum == test.minimum)
        case .blocked:
            #expect(!test.allowed, "\(decision)")
        }
    }

    @Test func namesTheRuleThatBlockedAndTheDomainThatHasOne() throws {
        guard case .blocked(_, let message, let hint) = Self.ats(Self.exceptions).decide("http://img.example.net/a.jpg")
        else {
            Issue.record("expected a block")
            return
        }
        #expect(message.contains("img.example.net has no ATS exception"))
        #expect(message.contains("cdn.example.com"))
        let snippet = try #require(hint)
        #expect(snippet.contains("<key>img.example.net</key>"))
        #expect(snippet.contains("NSExceptionAllowsInsecureHTTPLoads"))
    }

    @Test func allowsArbitraryLoadsUnlessTheIOS10RuleIgnoresIt() {
        #expect(Self.allowed(Self.ats(["NSAllowsArbitraryLoads": true]), "http://any.example.com/a.jpg"))
        for key in ["NSAllowsArbitraryLoadsInWebContent", "NSAllowsArbitraryLoadsForMedia", "NSAllowsLocalNetworking"] {
            // Present with any value, even false, the key makes iOS ignore NSAllowsArbitraryLoads.
            let ats = Self.ats(["NSAllowsArbitraryLoads": true, key: false])
            #expect(!Self.allowed(ats, "http://any.example.com/a.jpg"), "\(key)")
            guard case .blocked(_, let message, _) = ats.decide("http://any.example.com/a.jpg") else { continue }
            #expect(message.contains("ignored"))
        }
    }

    @Test func aListedDomainIsGovernedByItsOwnEntryEvenUnderArbitraryLoads() {
        let ats = Self.ats([
            "NSAllowsArbitraryLoads": true,
            "NSExceptionDomains": ["cdn.example.com": ["NSExceptionMinimumTLSVersion": "TLSv1.2"]],
        ])
        #expect(Self.allowed(ats, "http://other.example.com/a.jpg"))
        #expect(!Self.allowed(ats, "http://cdn.example.com/a.jpg"))
    }

    @Test func localNetworkingAllowsLocalNamesOnly() {
        let ats = Self.ats(["NSAllowsLocalNetworking": true])
        #expect(Self.allowed(ats, "http://printer.local/a.jpg"))
        #expect(Self.allowed(ats, "http://devbox/a.jpg"))
        #expect(!Self.allowed(ats, "http://cdn.example.com/a.jpg"))
    }

    @Test func valuesOfTheWrongTypeCountAsAbsentAndAreReported() {
        let ats = Self.ats([
            "NSAllowsArbitraryLoads": 1,
            "NSExceptionDomains": ["cdn.example.com": ["NSExceptionAllowsInsecureHTTPLoads": "YES"]],
        ])
        #expect(!Self.allowed(ats, "http://cdn.example.com/a.jpg"))
        #expect(!Self.allowed(ats, "http://other.example.com/a.jpg"))
        #expect(ats.problems.count == 2)
    }

    @Test func theDefaultIsHTTPSWithTLS12() {
        let ats = AppTransportSecurity()
        #expect(
            ats.decide("https://cdn.example.com/a.jpg")
                == .allowed(minimumTLS: .tls12, rule: ats.ruleText("cdn.example.com")))
        #expect(!Self.allowed(ats, "http://cdn.example.com/a.jpg"))
        #expect(Self.allowed(.arbitraryLoads, "http://cdn.example.com/a.jpg"))
    }

    static func allowed(_ ats: AppTransportSecurity, _ url: String) -> Bool {
        if case .allowed = ats.decide(url) { return true }
        return false
    }
}

extension AppTransportSecurity {
    fileprivate func ruleText(_ host: String) -> String { "the default (no exception for \(host))" }
}
