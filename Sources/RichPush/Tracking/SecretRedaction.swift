import Foundation

/// Removes a secret (the REST API key) from text that came from the other side of a connection, so
/// an endpoint that echoes the `Authorization` header cannot make richpush print or store the key.
///
/// ``TrackClient`` applies it to everything an endpoint sends back (the body, the captured headers,
/// and the failure text of a request with no answer) before any of it leaves the client, so every
/// command that talks to a track endpoint (`analytics flush`, and path A of `process`, `batch` and
/// `bench`) only ever sees redacted text.
///
/// What counts as the key, matched ignoring ASCII case: any run of ``fragmentLength`` or more of its
/// characters in order (a prefix, a suffix, the middle: an endpoint that echoes part of a key still
/// gives most of it away), also when the text percent-encodes them (`%4B%78`), breaks them over lines,
/// or holds the key base64-encoded (as in an echoed `Basic` header), at any alignment. Each such run,
/// with a `Bearer` before it (any case, any run of spaces or tabs), becomes one ``placeholder``. A key
/// shorter than ``fragmentLength`` is matched whole. A JSON body also has every string in it (names
/// and values) redacted after decoding, so an escaped key (`\u006b...`) is caught too; it is then
/// re-encoded.
///
/// ```swift
/// let redaction = SecretRedaction(secret: "k-123")
/// redaction.text("Invalid key: Authorization: BEARER k-123")  // "Invalid key: Authorization: [redacted]"
/// ```
package struct SecretRedaction: Sendable {
    /// What a removed secret is replaced with.
    package static let placeholder = "[redacted]"

    /// The fewest characters of the key in a row that are redacted (8: shorter runs would match
    /// ordinary words; longer ones would let an endpoint echo a quarter of a 32-character key).
    package static let fragmentLength = 8

    private let secret: [UInt8]
    /// How many bytes one match covers: ``fragmentLength``, or the whole key when it is shorter.
    private let width: Int
    /// Every `width`-byte run of the key and of its base64 forms, lowercased, packed into an integer.
    private let fragments: Set<UInt64>

    /// A redaction of `secret`; an empty secret redacts nothing.
    package init(secret: String) {
        self.secret = Array(secret.utf8)
        width = min(Self.fragmentLength, self.secret.count)
        var fragments: Set<UInt64> = []
        if width > 0 {
            for form in [self.secret] + Self.base64Forms(of: self.secret) where form.count >= width {
                let lowered = form.map(Self.lowered)
                for start in 0...(lowered.count - width) {
                    fragments.insert(Self.packed(lowered[start..<start + width]))
                }
            }
        }
        self.fragments = fragments
    }

    /// `bytes` with every run of the key (see ``SecretRedaction``) replaced by ``placeholder``: the one
    /// place the matching is done. Linear in `bytes`.
    package func bytes(_ bytes: [UInt8]) -> [UInt8] {
        guard width > 0, bytes.count >= width else { return bytes }
        // The text as it is read for matching: line breaks left out, %XX decoded, ASCII lowercased;
        // each byte remembers where in `bytes` it came from.
        var view: [UInt8] = []
        var origins: [Range<Int>] = []
        view.reserveCapacity(bytes.count)
        origins.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x0A || byte == 0x0D {
                index += 1
                continue
            }
            if byte == 0x25, index + 2 < bytes.count, let high = Self.hexValue(bytes[index + 1]),
                let low = Self.hexValue(bytes[index + 2])
            {
                view.append(Self.lowered(high << 4 | low))
                origins.append(index..<index + 3)
                index += 3
                continue
            }
            view.append(Self.lowered(byte))
            origins.append(index..<index + 1)
            index += 1
        }
        var covered = [Bool](repeating: false, count: bytes.count)
        var found = false
        if view.count >= width {
            for start in 0...(view.count - width) where fragments.contains(Self.packed(view[start..<start + width])) {
                for position in origins[start].lowerBound..<origins[start + width - 1].upperBound {
                    covered[position] = true
                }
                found = true
            }
        }
        guard found else { return bytes }
        let placeholder = Array(Self.placeholder.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        index = 0
        while index < bytes.count {
            guard covered[index] else {
                output.append(bytes[index])
                index += 1
                continue
            }
            Self.dropBearer(from: &output)
            output += placeholder
            while index < bytes.count && covered[index] { index += 1 }
        }
        return output
    }

    /// Removes a `Bearer` and the spaces or tabs after it from the end of `output` (the scheme goes
    /// with the key it introduces); nothing when `output` does not end so.
    private static func dropBearer(from output: inout [UInt8]) {
        var end = output.count
        while end > 0 && (output[end - 1] == 0x20 || output[end - 1] == 0x09) { end -= 1 }
        let bearer = Array("bearer".utf8)
        guard end < output.count, end >= bearer.count,
            output[(end - bearer.count)..<end].map(lowered) == bearer
        else { return }
        output.removeSubrange((end - bearer.count)...)
    }

    /// The parts of `secret`'s base64 encoding that depend on its bytes alone, for each of the three
    /// places it can start in a longer base64 text.
    static func base64Forms(of secret: [UInt8]) -> [[UInt8]] {
        (0..<3).map { shift in
            let encoded = Array(Data([UInt8](repeating: 0, count: shift) + secret).base64EncodedString().utf8)
            // Character k holds bits 6k..<6k+6 of the input: keep those within the secret's bits.
            let first = (8 * shift + 5) / 6
            let last = (8 * (shift + secret.count)) / 6
            return first < last ? Array(encoded[first..<last]) : []
        }
    }

    /// Up to eight bytes as one integer (every run one redaction compares has its `width`).
    private static func packed(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `text` redacted (see ``bytes(_:)``).
    package func text(_ text: String) -> String {
        guard width > 0, text.utf8.count >= width else { return text }
        return String(decoding: bytes(Array(text.utf8)), as: UTF8.self)
    }

    /// A response body redacted: the raw bytes, and when they are JSON every string in it after
    /// decoding (then re-encoded, so what the caller parses holds no escaped secret either).
    package func body(_ body: [UInt8]) -> [UInt8] {
        guard !secret.isEmpty, !body.isEmpty else { return body }
        guard let json = try? JSONValue.parse(body) else { return bytes(body) }
        return bytes(redacting(json).utf8)
    }

    /// Header values redacted.
    package func headers(_ headers: [String: String]) -> [String: String] {
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

    private static func lowered(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}
