import Testing

@testable import RichPush

@Suite struct URLCredentialsTests {
    @Test(arguments: [
        ("https://ana:pw@cdn.example.com/a.jpg", "https://cdn.example.com/a.jpg"),
        ("https://ana@cdn.example.com", "https://cdn.example.com"),
        ("http://a@b:p@c@host:8080/x?u=v@w#f@g", "http://host:8080/x?u=v@w#f@g"),
        ("GET http://u:p@h/x answered 404; then https://v@i/y.", "GET http://h/x answered 404; then https://i/y."),
        (#"{"url":"https://u:p@h/a","b":"mailto:x@y"}"#, #"{"url":"https://h/a","b":"mailto:x@y"}"#),
        ("<a href='https://u:p@h/'>https://h2/</a>", "<a href='https://h/'>https://h2/</a>"),
        ("no url here: ana@example.com", "no url here: ana@example.com"),
        ("https://cdn.example.com/path@2x.png", "https://cdn.example.com/path@2x.png"),
        ("https://u:p@", "https://"),
        // RFC 3986 allows ' in a password: it does not end the authority.
        ("https://ana:it's@cdn.example.com/a.jpg", "https://cdn.example.com/a.jpg"),
        ("://@", "://"),
        ("ends with ://", "ends with ://"),
    ])
    func stripsTheUserinfoOfEveryURL(text: String, expected: String) {
        #expect(URLCredentials.stripped(text) == expected)
        #expect(URLCredentials.appear(in: text) == (text != expected))
    }

    @Test func anOutcomeKeepsNoCredentialsAndWarns() {
        var outcome = Outcome(
            verdict: .fallback, reason: .httpStatus, message: "https://ana:pw@h/a.jpg answered HTTP 404",
            hint: "see https://ana:pw@h/", payloadBytes: 10)
        outcome.url = "https://ana:pw@h/a.jpg"
        outcome.warnings = [Warning("x", "from https://ana:pw@h/a.jpg")]
        let stripped = outcome.strippingURLCredentials()
        #expect(!stripped.json.text.contains("pw"), "\(stripped.json.text)")
        #expect(stripped.url == "https://h/a.jpg")
        #expect(stripped.warnings.map(\.code) == ["x", "url-credentials"])
        // Stripping twice warns once.
        #expect(stripped.strippingURLCredentials().warnings.count == 2)
        // An outcome without credentials is unchanged.
        var plain = outcome
        plain.url = "https://h/a.jpg"
        plain.message = "m"
        plain.hint = nil
        plain.warnings = []
        #expect(plain.strippingURLCredentials() == plain)
    }
}
