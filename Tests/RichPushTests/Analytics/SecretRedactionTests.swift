import Foundation
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

    /// The forms an endpoint echoes a key in: part of it, percent-encoded, base64 (a `Basic` header) at
    /// every alignment, broken over lines. Each leaves none of the key's 8-character runs.
    @Test(arguments: [
        "Kx-7f3a9c21e0b", "x-7f3a9c21e0b4", "%4B%78%2D%37%66%33%61%39%63%32%31%65%30%62%34", "Kx-7f3a9c\n21e0b4",
        "Kx-7f3a9\r\nc21e0b4",
    ])
    func everyEchoedFormOfTheKeyIsRedacted(_ echoed: String) {
        let text = redaction.text("error: invalid key '\(echoed)' for this app")
        #expect(text == "error: invalid key '[redacted]' for this app", "\(text)")
    }

    @Test func theKeyInBase64IsRedactedAtEveryAlignment() {
        for prefix in ["", "u", "us", "user:"] {
            let basic = Data((prefix + key).utf8).base64EncodedString()
            let text = redaction.text("Authorization: Basic \(basic)")
            // The middle of the encoding depends on the key's bytes alone, whatever the prefix.
            let middle = String(basic.dropFirst(basic.count / 2 - 4).prefix(8))
            #expect(
                !text.contains(middle) && text.contains("Basic ") && text.contains("[redacted]"), "\(prefix): \(text)")
        }
    }

    @Test func shortRunsAndOtherTextAreLeftAlone() {
        #expect(redaction.text("Kx-7f3a9 is eight") == "[redacted] is eight", "8 characters of the key in a row")
        #expect(redaction.text("Kx-7f3a is seven") == "Kx-7f3a is seven", "fewer than 8 characters of the key")
        #expect(redaction.text("100% sure, %zz") == "100% sure, %zz")
        #expect(SecretRedaction(secret: "k-123").text("got k-123 and k-12") == "got [redacted] and k-12")
    }

    @Test func aBodyThatIsNotJSONIsRedactedAsBytes() {
        let redacted = redaction.body(Array("<html>Bearer \(key)</html>".utf8))
        #expect(String(decoding: redacted, as: UTF8.self) == "<html>[redacted]</html>")
        #expect(redaction.headers(["Retry-After": key]) == ["Retry-After": "[redacted]"])
    }
}
