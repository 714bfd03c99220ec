import RichPush

/// An asset URL with placeholders a bench fills in for each device, so a run reproduces a
/// personalised or cache-busted campaign (one object per user, segment or send).
///
/// The placeholders, in braces: `{device}` is the device's position in the whole run (0 to
/// devices - 1, the same on every shard), `{shard}` the shard's index (1 to N, 1 without
/// `--shard`), `{random}` 16 hexadecimal digits drawn for the device from the run's seed (the same
/// device gets the same digits in every run with that seed). They may appear only after the host
/// (in the path, the query or the fragment): the host a device contacts is the template's own, so
/// the safety check and the policy judge it once. Any other `{...}` is refused, so a typo or an
/// unexpanded Liquid tag (`{{${user_id}}}`) does not silently become a literal path; a brace the URL
/// really holds is written `%7B` / `%7D`.
///
/// ```swift
/// let template = try URLTemplate("https://cdn.example.com/hero.jpg?u={device}&v={random}")
/// template.expand(device: 42, shard: 1, seed: 7)   // "https://cdn.example.com/hero.jpg?u=42&v=9f0c..."
/// ```
package struct URLTemplate: Sendable, Equatable {
    /// One part of a template: text as written, or a placeholder.
    enum Piece: Sendable, Equatable {
        case literal(String)
        case device, shard, random
    }

    /// The template as written.
    package let text: String
    let pieces: [Piece]

    /// The placeholders, as written.
    package static let placeholders = ["{device}", "{shard}", "{random}"]

    /// Reads `text`; throws when a brace is not one of ``placeholders`` or a placeholder sits in the
    /// scheme or the host.
    package init(_ text: String) throws(ConfigurationError) {
        self.text = text
        // Messages name the text as written, escaped: it comes from a file or a command line.
        let shownText = text.escapingControlCharacters
        var pieces: [Piece] = []
        var literal = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            literal += rest[..<open]
            let tail = rest[open...]
            let piece: Piece? =
                tail.hasPrefix("{device}")
                ? .device
                : tail.hasPrefix("{shard}")
                    ? .shard
                    : tail.hasPrefix("{random}") ? .random : nil
            guard let piece else {
                let shown = tail.prefix(while: { $0 != "}" }).prefix(40)
                throw ConfigurationError.invalid(
                    .url,
                    "\(shownText) holds '\(String(shown).escapingControlCharacters)\(tail.contains("}") ? "}" : "")', which is not a placeholder: the "
                        + "placeholders are \(Self.placeholders.joined(separator: ", ")); write a literal brace as %7B")
            }
            if !literal.isEmpty { pieces.append(.literal(literal)) }
            literal = ""
            pieces.append(piece)
            rest = tail.dropFirst(piece == .shard ? 7 : 8)
        }
        literal += rest
        if !literal.isEmpty { pieces.append(.literal(literal)) }
        self.pieces = pieces
        // The authority ends at the first /, ? or # after "://": every placeholder must come after it. A
        // path without a scheme (on the embedded server) has none; it is read again once it is a URL.
        var offset = 0
        var placeholders: [Int] = []
        for piece in pieces {
            if case .literal(let literal) = piece {
                offset += literal.count
            } else {
                placeholders.append(offset)
                offset += 1
            }
        }
        let shape = Array(representative)
        let query = shape.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? shape.count
        if let first = placeholders.first,
            let scheme = (0..<max(0, query - 2)).first(where: {
                shape[$0] == ":" && shape[$0 + 1] == "/" && shape[$0 + 2] == "/"
            })
        {
            let authorityEnd = shape[(scheme + 3)...].firstIndex(where: { "/?#".contains($0) }) ?? shape.count
            guard first >= authorityEnd else {
                throw ConfigurationError.invalid(
                    .url,
                    "\(shownText) has a placeholder in its scheme or host: placeholders go in the path or the query, "
                        + "so every device contacts the host the safety check judged")
            }
        }
    }

    /// Whether any placeholder is in the text.
    package var isTemplate: Bool {
        pieces.contains { piece in
            if case .literal = piece { false } else { true }
        }
    }

    /// The URL with each placeholder replaced by `0`: what the policy and the safety check judge (a
    /// placeholder expands to digits and letters in the path or query only, which changes neither).
    package var representative: String {
        pieces.map { piece in
            if case .literal(let text) = piece { text } else { "0" }
        }.joined()
    }

    /// The URL device `device` of shard `shard` requests in a run with `seed`.
    package func expand(device: Int, shard: Int, seed: UInt64) -> String {
        var url = ""
        url.reserveCapacity(text.utf8.count + 16)
        for piece in pieces {
            switch piece {
            case .literal(let text): url += text
            case .device: url += String(device)
            case .shard: url += String(shard)
            case .random: url += Self.hex(Self.random(device: device, seed: seed))
            }
        }
        return url
    }

    /// The `{random}` value of a device: SplitMix64 of the seed and the device's position.
    static func random(device: Int, seed: UInt64) -> UInt64 {
        var z = seed &+ UInt64(truncatingIfNeeded: device) &* 0x9E37_79B9_7F4A_7C15 &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// 16 lower-case hexadecimal digits, leading zeros kept.
    static func hex(_ value: UInt64) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes = [UInt8](repeating: 0, count: 16)
        for position in 0..<16 { bytes[15 - position] = digits[Int((value >> (UInt64(position) * 4)) & 0xF)] }
        return String(decoding: bytes, as: UTF8.self)
    }
}
