import RichPush
import Testing

/// The API key removed from what an endpoint sends back: alone, after `Bearer` in any case, escaped
/// in JSON, in headers; text without it unchanged.
@Suite struct SecretRedactionTests {
    let key = "Kx-7f3a9c21e0b4"
    var redaction: SecretRedaction { SecretRedaction(secret: key) }

    @Test func theKeyAndBearerKeyBecomeThePlaceholder() {
        #expect(redaction.text("Authorization: Bearer \(key)") == "Authorization: [redacted]")
        #expect(redaction.text("got bearer\t \(key)!") == "got [redacted]!")
        #expect(redaction.text("BEARER \(key) and \(key)") == "[redacted] and [redacted]")
        #expect(redaction.text("key=\(key.uppercased())") == "key=[redacted]", "ASCII case ignored")
        #expect(redaction.text("Bearer nothing") == "Bearer nothing")
        #expect(redaction.text("no secret here") == "no secret here")
    }

    @Test func aJSONBodyIsRedactedAfterDecodingItsStrings() throws {
        let escaped = key.unicodeScalars.map { String(format: "\\u%04x", $0.value) }.joined()
        let body = #"{"message":"Invalid: Bearer \#(escaped)","errors":["\#(key)"],"\#(key)":1}"#
        let redacted = redaction.body(Array(body.utf8))
        let text = String(decoding: redacted, as: UTF8.self)
        #expect(!text.lowercased().contains(key.lowercased()), "\(text)")
        let json = try JSONValue.parse(redacted)
        #expect(json["message"] == .string("Invalid: [redacted]"))
        #expect(json["errors"] == .array([.string("[redacted]")]))
    }

    @Test func aBodyThatIsNotJSONIsRedactedAsBytes() {
        let redacted = redaction.body(Array("<html>Bearer \(key)</html>".utf8))
        #expect(String(decoding: redacted, as: UTF8.self) == "<html>[redacted]</html>")
        #expect(redaction.headers(["Retry-After": key]) == ["Retry-After": "[redacted]"])
    }
}
