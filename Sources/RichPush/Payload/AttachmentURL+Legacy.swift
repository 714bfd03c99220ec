/// The RFC 1738/1808 parser `URL(string:)` runs before iOS 17, or in an extension linked against an
/// SDK before 17: one check of the whole string, then the text kept as written.
///
/// The check is CoreFoundation's `_CFStringIsLegalURLString` with its `sURLValidCharacters` table
/// (apple/swift-corelibs-foundation Sources/CoreFoundation/CFURL.c@e55e1d8:361-494,1925-2013, the same
/// in Darwin's CF-1153.18), and Swift's `URL(string:)` returned nil for the empty string before it
/// (Sources/Foundation/URL.swift@c078b15:495-497); docs/url-parsing-by-ios-version.md gives each rule
/// with its citation. In short: 81 ASCII bytes are legal anywhere; `[` and `]` pass; one `#`; a `%`
/// needs two hex digits after it (`%00` passes); every other byte, every control character, space and
/// any non-ASCII character make the URL nil.
extension AttachmentURL {
    /// Why the RFC 1738/1808 parser returns nil for `text`, in words (`a space`, `'{'`, `a second '#'`),
    /// or nil when it accepts it.
    package static func legacyRefusal(of text: String) -> String? {
        if text.isEmpty { return "an empty string" }
        let units = Array(text.utf16)
        var seenHash = false
        var index = 0
        while index < units.count {
            let unit = units[index]
            defer { index += 1 }
            if unit == UInt16(UInt8(ascii: "%")) {
                let hex =
                    index + 2 < units.count && isHexDigit(units[index + 1]) && isHexDigit(units[index + 2])
                guard hex else { return "a '%' not followed by two hex digits" }
                index += 2
                continue
            }
            if unit == UInt16(UInt8(ascii: "#")) {
                guard !seenHash else { return "a second '#'" }
                seenHash = true
                continue
            }
            if unit < 0x80, legalBytes[Int(unit)] { continue }
            return describe(unit, in: text, at: index)
        }
        return nil
    }

    /// The ASCII bytes the old parser accepts anywhere (`isURLLegalCharacter`), plus `[` and `]`,
    /// which its check lets through; `%` and `#` have rules of their own.
    static let legalBytes: [Bool] = (0..<128).map { byte in
        switch byte {
        case 0x21, 0x24, 0x26...0x3B, 0x3D, 0x3F...0x5A, 0x5B, 0x5D, 0x5F, 0x61...0x7A, 0x7E: true
        default: false
        }
    }

    private static func isHexDigit(_ unit: UInt16) -> Bool {
        switch unit {
        case 0x30...0x39, 0x41...0x46, 0x61...0x66: true
        default: false
        }
    }

    /// The refused character in words.
    private static func describe(_ unit: UInt16, in text: String, at index: Int) -> String {
        switch unit {
        case 0x20: return "a space"
        case 0x09: return "a tab"
        case 0x0A: return "a line feed"
        case 0x0D: return "a carriage return"
        case 0x22, 0x3C, 0x3E, 0x5C, 0x5E, 0x60, 0x7B, 0x7C, 0x7D:
            return "'\(Character(Unicode.Scalar(UInt8(unit))))'"
        case 0..<0x20, 0x7F: return "the control character U+" + String(unit, radix: 16, uppercase: true)
        default:
            // A non-ASCII character: name the whole scalar the unit belongs to.
            var offset = 0
            for scalar in text.unicodeScalars {
                offset += scalar.utf16.count
                if index < offset { return "the non-ASCII character '\(scalar)'" }
            }
            return "a non-ASCII character"
        }
    }
}
