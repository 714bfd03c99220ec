import Foundation

/// A media URL (`ab.att.url`, or another SDK's key) as the extension reads it: `URL(string:)` of the text, nothing trimmed or repaired.
///
/// An extension built with a current SDK (iOS 17 and later) parses with RFC 3986 rules: characters it
/// cannot keep (spaces, `|`, `^`, non-ASCII, a `%` without two hex digits) are percent-encoded, a
/// non-ASCII host becomes its `xn--` form, and text it cannot parse at all (a leading space, a space
/// or backslash in the host, a port that is not a number) gives nil. This toolchain's Foundation
/// implements that parser, so richpush asks it and downloads `absoluteString`, byte for byte: what
/// the device requests, not what the sender probably meant. ``warnings`` says where those differ.
///
/// ```swift
/// let url = AttachmentURL("https://cdn.example.com/my hero.jpg")
/// url.requested  // "https://cdn.example.com/my%20hero.jpg"
/// ```
package struct AttachmentURL: Sendable, Equatable {
    /// The text as the payload carries it.
    package let written: String
    /// The URL the device requests (`URL(string:)?.absoluteString`); nil when `URL(string:)` returns nil.
    package let requested: String?
    /// The scheme, lower-cased; nil for a relative reference or a nil URL.
    package let scheme: String?
    /// Whether the URL has a non-empty host.
    package let hasHost: Bool
    /// The port as written, if any (`URL(string:)` accepts any number of digits).
    package let port: Int?

    /// The largest TCP port; `URL(string:)` accepts more, a connection cannot be made to it.
    package static let maxPort = 65535

    /// The payload key the text came from, for messages (`ab.att.url`, `fcm_options.image`).
    package let key: String
    /// The parser `URL(string:)` runs on the phone judged (``DeviceVersion/urlParser``).
    package let parser: URLParser
    /// Why the RFC 1738/1808 parser (iOS 16 and earlier, or an extension linked against an older SDK)
    /// returns nil for the text (``legacyRefusal(of:)``); nil when it accepts it.
    package let legacyProblem: String?

    /// The text as `parser` reads it. RFC 3986 is this toolchain's Foundation, which implements it;
    /// RFC 1738/1808 is CoreFoundation's check, then the text as written.
    package init(_ written: String, key: String = "ab.att.url", parser: URLParser = .rfc3986) {
        self.written = written
        self.key = key
        self.parser = parser
        legacyProblem = Self.legacyRefusal(of: written)
        let url = URL(string: written)
        switch parser {
        case .rfc3986:
            requested = url?.absoluteString
        case .rfc1738:
            // A string the check accepts is kept byte for byte; its parts are read as RFC 3986 reads
            // them, which agree on the characters the check lets through.
            requested = legacyProblem == nil ? written : nil
        }
        scheme = requested == nil ? nil : url?.scheme?.lowercased() ?? Self.scheme(of: written)
        hasHost = requested == nil ? false : url?.host.map { !$0.isEmpty } ?? Self.hasAuthority(written)
        port = requested == nil ? nil : url?.port
    }

    /// Whether `text` has a non-empty host after `scheme://` (and any `userinfo@`): what the old parser
    /// keeps as written where this toolchain's RFC 3986 parser returns nil (`http://[bad/a.jpg`).
    static func hasAuthority(_ text: String) -> Bool {
        guard let start = text.range(of: "://")?.upperBound else { return false }
        let authority = text[start...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        return !host.isEmpty && !host.hasPrefix(":")
    }

    /// The scheme of `text` (letters, then letters, digits, `+ - .` up to a `:`), lower-cased.
    static func scheme(of text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let candidate = text[..<colon]
        guard let first = candidate.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
            candidate.unicodeScalars.allSatisfy({
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0))
            })
        else { return nil }
        return candidate.lowercased()
    }

    /// Why the device cannot request this URL at all (the extension's guard fails, UNError 100), with a
    /// hint; nil when it can (its scheme is judged later, by App Transport Security and the fetch policy).
    package var refusal: (message: String, hint: String?)? {
        let shown = "'\(key)' ('\(written)')"
        if parser == .rfc1738, let legacyProblem {
            let encodes = URL(string: written) != nil
            return (
                "\(shown) holds \(legacyProblem): on this phone URL(string:) runs the RFC 1738/1808 parser "
                    + "(\(DeviceVersion.legacyPhones)), which returns nil for it (UNError 100)"
                    + (encodes ? "; iOS 17 and later, in an extension linked against their SDK, encode it." : "."),
                written.isEmpty
                    ? nil
                    : "percent-encode it where the URL is written (in the template, for Liquid): a URL in "
                        + "RFC 3986 form reads the same on every version."
            )
        }
        guard let requested, let scheme else {
            if requested == nil, let first = written.unicodeScalars.first, Self.isWhitespace(first) {
                return (
                    "\(shown) starts with whitespace, and URL(string:) returns nil for it (UNError 100).",
                    "remove the whitespace before the scheme; the device does not trim it."
                )
            }
            if requested == nil {
                return (
                    "\(shown) is not a URL the device can read: URL(string:) returns nil for it (UNError 100).",
                    written.isEmpty
                        ? nil
                        : "check the host and the port: spaces, backslashes and unclosed brackets are not allowed "
                            + "before the path, and a port is digits only."
                )
            }
            return ("\(shown) is not an absolute URL (UNError 100).", "write the full URL, starting with https://.")
        }
        guard hasHost || scheme == "file" else {
            return (
                "\(shown) is not an absolute URL: it has no host (UNError 100).",
                "write the host after '\(scheme)://'; the device would request '\(requested)'."
            )
        }
        if let port, port > Self.maxPort {
            return (
                "\(shown) has port \(port): URL(string:) reads it, but ports end at \(Self.maxPort), so the download "
                    + "fails and the plain notification shows.",
                "fix the port, or leave it out for the scheme's default."
            )
        }
        return nil
    }

    /// Where the URL the device requests differs from the text: whitespace at the end (kept,
    /// percent-encoded), characters percent-encoded, a `%` read as a literal percent sign, a
    /// non-ASCII host. Empty when the device requests the text as written, or cannot request it (``refusal``).
    package var warnings: [Warning] {
        guard let requested, refusal == nil else { return [] }
        var version: [Warning] = []
        if parser == .rfc3986, let legacyProblem {
            version.append(
                Warning(
                    "url-needs-ios-17",
                    "'\(key)' holds \(legacyProblem), which URL(string:) reads only on iOS 17 and later, in an "
                        + "extension linked against their SDK (requesting \(requested)): on "
                        + "\(DeviceVersion.legacyPhones), it returns nil and the plain notification shows (judge with "
                        + "--ios 16 or --linked-sdk 16). Percent-encode it where the URL is written."))
        }
        guard requested != written else { return version }
        var warnings: [Warning] = []
        if let last = written.unicodeScalars.last, Self.isWhitespace(last) {
            warnings.append(
                Warning(
                    "url-trailing-whitespace",
                    "'\(key)' ends with whitespace, which URL(string:) keeps, percent-encoded: the device requests "
                        + "\(requested). Remove the whitespace at the end; the device does not trim it."))
        }
        if Self.hasStrayPercent(written) {
            warnings.append(
                Warning(
                    "url-stray-percent",
                    "'\(key)' has a '%' not followed by two hex digits; URL(string:) reads it as a literal percent "
                        + "sign (%25): the device requests \(requested). Write %25 for a percent sign, or fix the escape."
                ))
        }
        let encoded = Self.encodedCharacters(written)
        if !encoded.isEmpty || warnings.isEmpty {
            let what = encoded.isEmpty ? "rewrites parts of it" : "percent-encodes " + encoded.joined(separator: ", ")
            warnings.append(
                Warning(
                    "url-encoded",
                    "URL(string:) \(what) in '\(key)': the device requests \(requested). If the file on the server "
                        + "is named with these characters, nothing to fix; otherwise write the URL percent-encoded "
                        + "as you mean it."))
        }
        return version + warnings
    }

    /// Space, tab, line feed, carriage return and the other Unicode white space: `URL(string:)` never trims them.
    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        CharacterSet.whitespacesAndNewlines.contains(scalar)
    }

    /// Whether some `%` is not followed by two hex digits.
    static func hasStrayPercent(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        func isHex(_ index: Int) -> Bool {
            index < bytes.count && (bytes[index] < 0x80) && Character(Unicode.Scalar(bytes[index])).isHexDigit
        }
        return bytes.indices.contains { bytes[$0] == UInt8(ascii: "%") && !(isHex($0 + 1) && isHex($0 + 2)) }
    }

    /// The distinct characters of `text` that RFC 3986 has no place for, named for a message (at most eight).
    static func encodedCharacters(_ text: String) -> [String] {
        var seen: Set<Unicode.Scalar> = []
        var names: [String] = []
        for scalar in text.unicodeScalars where !seen.contains(scalar) {
            let name: String?
            switch scalar {
            case " ": name = "spaces"
            case "\t": name = "tabs"
            case "\n": name = "line feeds"
            case "\r": name = "carriage returns"
            case "\"", "<", ">", "\\", "^", "`", "{", "|", "}": name = "'\(scalar)'"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                name = "U+" + String(scalar.value, radix: 16, uppercase: true)
            case _ where scalar.value > 0x7F:
                name = isWhitespace(scalar) ? "U+" + String(scalar.value, radix: 16, uppercase: true) : "'\(scalar)'"
            default: name = nil
            }
            seen.insert(scalar)
            if let name, names.count < 8 { names.append(name) }
        }
        return names
    }
}
