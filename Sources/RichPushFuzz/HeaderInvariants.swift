import Foundation
import RichPush

/// Header values from a rate-limited answer (`Retry-After`, `X-RateLimit-Reset`), and the key
/// redaction every endpoint text goes through.
///
/// - Neither reader traps, and a wait it returns is between zero and ``RateLimitHeaders/maximumSeconds``.
/// - An HTTP-date that parses names a second of years 0 to 9999, and that second written as an
///   IMF-fixdate parses back to it; so does the second the first eight bytes name, whenever it can be written.
/// - Redacting the bytes leaves no trace of the key (in any ASCII case), as text and as a JSON body.
enum HeaderInvariants {
    static let now = Date(timeIntervalSince1970: 1_709_294_400)
    static let key = "K3y-9xQ7"

    static func check(_ bytes: [UInt8]) {
        let value = String(decoding: bytes, as: UTF8.self)
        let ceiling = Duration.seconds(RateLimitHeaders.maximumSeconds)
        for wait in [RateLimitHeaders.retryAfter(value, now: now), RateLimitHeaders.rateLimitReset(value, now: now)] {
            if let wait { require(wait >= .zero && wait <= ceiling, "a wait of \(wait) for '\(value)'") }
        }
        if let epoch = RateLimitHeaders.epochSeconds(httpDate: value, now: now) {
            checkRoundTrip(epoch, from: value)
        }
        if bytes.count >= 8 {
            let epoch = bytes.prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
            if let text = RateLimitHeaders.imfFixdate(epochSeconds: epoch) {
                require(
                    RateLimitHeaders.epochSeconds(httpDate: text) == epoch, "'\(text)' does not read back as \(epoch)")
            }
        }
        let redaction = SecretRedaction(secret: key)
        let text = redaction.text(value)
        require(!holdsKey(Array(text.utf8)), "the key survived redaction: \(text)")
        let body = String(decoding: redaction.body(bytes), as: UTF8.self)
        require(!holdsKey(Array(body.utf8)), "the key survived body redaction: \(body)")
        if (try? JSONValue.parse(bytes)) != nil {
            require((try? JSONValue.parse(redaction.body(bytes))) != nil, "a JSON body is no longer JSON: \(body)")
        }
    }

    /// Whether `bytes` hold the key, ignoring ASCII case (as the redaction does; a Kelvin sign is not a K).
    static func holdsKey(_ bytes: [UInt8]) -> Bool {
        func folded(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
        let needle = key.utf8.map(folded)
        let haystack = bytes.map(folded)
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<$0 + needle.count]) == needle }
    }

    static func checkRoundTrip(_ epoch: Int64, from value: String) {
        guard let text = RateLimitHeaders.imfFixdate(epochSeconds: epoch) else {
            require(false, "'\(value)' parsed to \(epoch), outside years 0 to 9999")
            return
        }
        require(RateLimitHeaders.epochSeconds(httpDate: text) == epoch, "'\(value)' -> \(epoch) -> '\(text)'")
    }
}
