/// One request header line, as `-H 'Name: value'` gives it (curl's syntax).
///
/// A header replaces the default of the same name (compared case-insensitively): `User-Agent`,
/// `Accept`, `Accept-Language`, `Accept-Encoding`. `Name:` with nothing after the colon removes the
/// header instead, as in curl. A name must be an RFC 9110 token; a name or value holding CR, LF or NUL
/// is refused, since it would smuggle a second header (or a second request) into the one sent.
///
/// ```swift
/// let header = try RequestHeader(parsing: "X-Device: iPhone15,2")
/// ```
package struct RequestHeader: Sendable, Equatable, CustomStringConvertible {
    /// Why a header line cannot be sent.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// What is wrong and how to write it instead.
        package var message: String
        package var description: String { message }
    }

    package var name: String
    /// The value; empty removes the header from the request.
    package var value: String

    /// Parses `Name: value` (spaces and tabs around the value are dropped, as a server would).
    package init(parsing text: String) throws(Failure) {
        let shown = text.escapingControlCharacters
        if let bad = text.unicodeScalars.first(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
            let what = bad == "\0" ? "a NUL byte" : bad == "\r" ? "a carriage return (CR)" : "a line feed (LF)"
            throw Failure(
                message:
                    "'\(shown)' holds \(what): a header is one line, and CR, LF or NUL in it would add lines to the "
                    + "request; give each header with its own -H")
        }
        guard let colon = text.firstIndex(of: ":") else {
            throw Failure(message: "'\(shown)' is not 'Name: value' (for example 'X-Device: iPhone15,2')")
        }
        let name = String(text[..<colon])
        guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte) else {
            throw Failure(
                message:
                    "'\(shown)': the header name '\(name.escapingControlCharacters)' must be letters, digits or "
                    + "!#$%&'*+-.^_`|~ with no spaces (for example 'X-Device: iPhone15,2')")
        }
        self.name = name
        value = String(text[text.index(after: colon)...]).trimmingSpacesAndTabs
    }

    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// The line as libcurl takes it: `Name: value`, or `Name:` to remove the header.
    package var description: String { value.isEmpty ? "\(name):" : "\(name): \(value)" }

    /// The headers sent: `defaults`, each replaced (in place) by the last given header of its name,
    /// then every given header of another name, in order. A removal stays in the list (`Name:`)
    /// so libcurl drops its own header of that name (User-Agent, Accept-Encoding).
    package static func merged(_ defaults: [RequestHeader], with given: [RequestHeader]) -> [RequestHeader] {
        var lastGiven: [String: RequestHeader] = [:]
        for header in given { lastGiven[header.name.lowercased()] = header }
        let defaultNames = Set(defaults.map { $0.name.lowercased() })
        // Other names are all sent, repeated ones too, as curl sends each -H.
        var result = defaults.map { lastGiven[$0.name.lowercased()] ?? $0 }
        result += given.filter { !defaultNames.contains($0.name.lowercased()) }
        return result
    }

    /// RFC 9110 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    fileprivate var trimmingSpacesAndTabs: String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isBlank($0) }), let end = lastIndex(where: { !isBlank($0) }) else {
            return ""
        }
        return String(self[start...end])
    }
}
