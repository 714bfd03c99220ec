import Testing

@testable import RichPush

/// `URL(string:)` before iOS 17, or in an extension linked against an older SDK: CoreFoundation's
/// check of the whole string (docs/url-parsing-by-ios-version.md, section b), then the text as written.
@Suite struct LegacyURLParserTests {
    static let host = "https://cdn.example.com"

    @Test(
        arguments: [
            ("/hero.jpg", nil), ("/a%20b.jpg", nil), ("/a%00b.jpg", nil), ("/[x].jpg", nil), ("/a.jpg#f", nil),
            ("/a!$&'()*+,-.;=?@_~:.jpg", nil),
            ("/my hero.jpg", "a space"), ("/a\tb", "a tab"), ("/a\"b", "'\"'"), ("/a<b", "'<'"), ("/a>b", "'>'"),
            ("/a{b}", "'{'"), ("/a|b", "'|'"), ("/a\\b", "'\\'"), ("/a^b", "'^'"), ("/a`b", "'`'"),
            ("/caf\u{E9}.jpg", "the non-ASCII character '\u{E9}'"),
            ("/\u{1F600}.jpg", "the non-ASCII character '\u{1F600}'"),
            ("/a%2", "a '%' not followed by two hex digits"), ("/a%zz", "a '%' not followed by two hex digits"),
            ("/a#b#c", "a second '#'"), ("/a\u{7F}", "the control character U+7F"),
        ] as [(String, String?)])
    func theCheckNamesWhatItRefuses(path: String, problem: String?) {
        #expect(AttachmentURL.legacyRefusal(of: Self.host + path) == problem)
    }

    @Test func theEmptyStringIsNil() {
        #expect(AttachmentURL.legacyRefusal(of: "") == "an empty string")
    }

    /// What the check accepts is requested as written (the RFC 3986 parser would encode the brackets).
    @Test func anAcceptedURLIsRequestedAsWritten() {
        let url = AttachmentURL(Self.host + "/[x].jpg", parser: .rfc1738)
        #expect(url.requested == Self.host + "/[x].jpg" && url.scheme == "https" && url.hasHost)
        #expect(url.refusal == nil && url.warnings.isEmpty)
    }

    /// What only the old parser reads (an unclosed bracket passes its check) is requested as written.
    @Test func aURLOnlyTheOldParserReadsIsRequested() {
        let url = AttachmentURL("http://[bad/a.jpg", parser: .rfc1738)
        #expect(url.requested == "http://[bad/a.jpg" && url.scheme == "http" && url.hasHost)
        #expect(url.refusal == nil)
    }

    @Test func aRefusedURLIsInvalidOnTheOldParserAndWarnedOnTheNew() throws {
        let written = Self.host + "/summer sale.jpg"
        let old = AttachmentURL(written, parser: .rfc1738)
        #expect(old.requested == nil)
        let refusal = try #require(old.refusal)
        #expect(refusal.message.contains("holds a space") && refusal.message.contains("RFC 1738/1808"))
        #expect(refusal.message.contains("iOS 17 and later"), "it names the versions that read it")
        #expect(refusal.hint?.contains("percent-encode") == true)
        let new = AttachmentURL(written)
        #expect(new.requested == Self.host + "/summer%20sale.jpg" && new.refusal == nil)
        #expect(new.warnings.map(\.code) == ["url-needs-ios-17", "url-encoded"])
        #expect(new.warnings.first?.message.contains("--ios 16") == true)
    }

    @Test func bothVersionsDecideTheParser() {
        func parser(_ ios: Int, _ linked: Int) -> URLParser {
            DeviceVersion(ios: IOSVersion(ios), linkedSDK: IOSVersion(linked)).urlParser
        }
        #expect(parser(17, 17) == .rfc3986 && parser(18, 17) == .rfc3986 && parser(18, 18) == .rfc3986)
        #expect(parser(16, 16) == .rfc1738 && parser(18, 16) == .rfc1738 && parser(16, 18) == .rfc1738)
        #expect(DeviceVersion.standard.urlParser == .rfc3986)
        #expect(DeviceVersion(ios: IOSVersion(16)).linkedSDK == IOSVersion(16))
    }

    @Test func versionsParseOnlyWhereRichpushHasFacts() {
        #expect(IOSVersion(parsing: "16") == IOSVersion(16))
        #expect(IOSVersion(parsing: "17.5") == IOSVersion(17, 5))
        #expect(IOSVersion(parsing: "17.5.1") == IOSVersion(17, 5))
        for bad in ["14", "19", "26", "", "17.", ".5", "17.x", "seventeen", "17.5.1.2", "1700"] {
            #expect(IOSVersion(parsing: bad) == nil, "\(bad)")
        }
        #expect(
            DeviceUserAgent(ios: IOSVersion(16)).description == "NotificationService/1 CFNetwork/1410.0.3 Darwin/22.6.0"
        )
        #expect(DeviceUserAgent().description == "NotificationService/1 CFNetwork/1496.0.7 Darwin/23.5.0")
    }
}
