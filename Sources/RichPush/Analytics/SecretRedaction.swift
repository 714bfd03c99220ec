/// Removes a secret (the REST API key) from text that came from the other side of a connection, so
/// an endpoint that echoes the `Authorization` header cannot make richpush print or store the key.
///
/// ``TrackClient`` applies it to everything an endpoint sends back (the body, the captured headers,
/// and the failure text of a request with no answer) before any of it leaves the client, so every
/// command that talks to a track endpoint (`analytics flush`, and path A of `process`, `batch` and
/// `bench`) only ever sees redacted text. `Bearer <key>` (any case of `Bearer`, any run of spaces
/// or tabs) and the key alone (matched ignoring ASCII case) each become ``placeholder``. A JSON body
/// also has every string in it (names and values) redacted after decoding, so an escaped key
/// (`\u006b...`) is caught too; it is then re-encoded.
///
/// ```swift
/// let redaction = SecretRedaction(secret: "k-123")
/// redaction.text("Invalid key: Authorization: BEARER k-123")  // "Invalid key: Authorization: [redacted]"
/// ```
public struct SecretRedaction: Sendable {
    /// What a removed secret is replaced with.
    public static let placeholder = "[redacted]"

    private let secret: [UInt8]

    /// A redaction of `secret`; an empty secret redacts nothing.
    public init(secret: String) { self.secret = Array(secret.utf8) }

    /// `bytes` with every `Bearer <secret>` and every `<secret>` replaced by ``placeholder``: the one
    /// place the matching is done.
    public func bytes(_ bytes: [UInt8]) -> [UInt8] {
        guard !secret.isEmpty, bytes.count >= secret.count else { return bytes }
        let bearer = Array("bearer".utf8)
        let placeholder = Array(Self.placeholder.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if Self.matches(bearer, in: bytes, at: index) {
                var after = index + bearer.count
                while after < bytes.count && (bytes[after] == 0x20 || bytes[after] == 0x09) { after += 1 }
                if after > index + bearer.count && Self.matches(secret, in: bytes, at: after) {
                    output += placeholder
                    index = after + secret.count
                    continue
                }
            }
            if Self.matches(secret, in: bytes, at: index) {
                output += placeholder
                index += secret.count
                continue
            }
            output.append(bytes[index])
            index += 1
        }
        return output
    }

    /// `text` redacted (see ``bytes(_:)``).
    public func text(_ text: String) -> String {
        guard !secret.isEmpty, text.utf8.count >= secret.count else { return text }
        return String(decoding: bytes(Array(text.utf8)), as: UTF8.self)
    }

    /// A response body redacted: the raw bytes, and when they are JSON every string in it after
    /// decoding (then re-encoded, so what the caller parses holds no escaped secret either).
    public func body(_ body: [UInt8]) -> [UInt8] {
        guard !secret.isEmpty, !body.isEmpty else { return body }
        guard let json = try? JSONValue.parse(body) else { return bytes(body) }
        return bytes(redacting(json).utf8)
    }

    /// Header values redacted.
    public func headers(_ headers: [String: String]) -> [String: String] {
        headers.mapValues(text)
    }

    private func redacting(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members): .object(members.map { (text($0.key), redacting($0.value)) })
        case .array(let items): .array(items.map(redacting))
        case .string(let string): .string(text(string))
        case .number, .bool, .null: value
        }
    }

    /// Whether `needle` is at `index` of `haystack`, ignoring ASCII case.
    private static func matches(_ needle: [UInt8], in haystack: [UInt8], at index: Int) -> Bool {
        guard haystack.count - index >= needle.count else { return false }
        for offset in 0..<needle.count where lowered(haystack[index + offset]) != lowered(needle[offset]) {
            return false
        }
        return true
    }

    private static func lowered(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}
