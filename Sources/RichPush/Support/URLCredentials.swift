/// Keeps the user name and password of a URL (`https://user:pass@host/…`) out of everything richpush
/// prints or stores.
///
/// The transfer itself still uses them (libcurl sends them as a `Basic` header, which `-v` traces show
/// masked): only the text richpush writes about a URL loses them. The payload's own members are the
/// exception: the mutated payload passes them through as the device receives them, and the outcome
/// warns (`url-credentials`) that every phone the push reaches holds them.
///
/// ```swift
/// URLCredentials.stripped("https://ana:pw@cdn.example.com/a.jpg")  // "https://cdn.example.com/a.jpg"
/// URLCredentials.stripped("GET http://u@h/x answered 404")          // "GET http://h/x answered 404"
/// ```
package enum URLCredentials {
    /// Whether `text` holds a URL with a user name or password in its authority.
    package static func appear(in text: String) -> Bool {
        text.utf8.contains(UInt8(ascii: "@")) && !ranges(in: Array(text.utf8)).isEmpty
    }

    /// `text` with the `userinfo@` part of every `scheme://userinfo@host` in it removed; text without
    /// one is returned as it is. Linear in the text.
    package static func stripped(_ text: String) -> String {
        // Most text has no `@` at all: every outcome and stderr line passes here, so no copy is made for it.
        guard text.utf8.contains(UInt8(ascii: "@")) else { return text }
        let bytes = Array(text.utf8)
        let found = ranges(in: bytes)
        guard !found.isEmpty else { return text }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var position = 0
        for range in found {
            result.append(contentsOf: bytes[position..<range.lowerBound])
            position = range.upperBound
        }
        result.append(contentsOf: bytes[position...])
        return String(decoding: result, as: UTF8.self)
    }

    /// `text` stripped, or nil for nil.
    package static func stripped(_ text: String?) -> String? {
        text.map { stripped($0) }
    }

    /// The byte ranges of each `userinfo@` (the `@` included) that follows a `://`.
    ///
    /// An authority ends at `/`, `?`, `#`, a space or control character, a double quote, `<`, `>` or a
    /// backslash (the end of a URL in prose, JSON or HTML); not at `'`, which RFC 3986 allows in a
    /// password. The userinfo is everything before the authority's last `@`, as RFC 3986 reads it.
    static func ranges(in bytes: [UInt8]) -> [Range<Int>] {
        var found: [Range<Int>] = []
        var index = 0
        let count = bytes.count
        while index + 2 < count {
            guard bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: "/"),
                bytes[index + 2] == UInt8(ascii: "/")
            else {
                index += 1
                continue
            }
            let start = index + 3
            var end = start
            var lastAt: Int? = nil
            while end < count, !endsAuthority(bytes[end]) {
                if bytes[end] == UInt8(ascii: "@") { lastAt = end }
                end += 1
            }
            if let lastAt { found.append(start..<(lastAt + 1)) }
            index = end
        }
        return found
    }

    private static func endsAuthority(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "\""), UInt8(ascii: "<"),
            UInt8(ascii: ">"), UInt8(ascii: "\\"), UInt8(ascii: " "), 0x7F:
            return true
        default:
            return byte < 0x20
        }
    }
}

extension Outcome {
    /// The warning for a payload whose media URL carries a user name or password.
    static let urlCredentialsWarning = Warning(
        "url-credentials",
        "the media URL carries a user name or password: every phone the push reaches holds them in its payload. "
            + "richpush leaves them out of what it prints and stores; serve the asset from a URL without "
            + "credentials (a signed, expiring URL), as a CDN expects.")

    /// The outcome with the user name and password of every URL left out of its text (``URLCredentials``),
    /// and the `url-credentials` warning when the payload's media URL carried them.
    package func strippingURLCredentials() -> Outcome {
        var outcome = self
        let carried =
            [url].compactMap { $0 }.contains(where: URLCredentials.appear(in:))
            || (attachments ?? []).contains { URLCredentials.appear(in: $0.url) }
        outcome.message = URLCredentials.stripped(message)
        outcome.hint = URLCredentials.stripped(hint)
        outcome.url = URLCredentials.stripped(url)
        outcome.download = download?.strippingURLCredentials()
        outcome.warnings = warnings.map { Warning($0.code, URLCredentials.stripped($0.message)) }
        outcome.attachments = attachments?.map { item in
            var item = item
            item.url = URLCredentials.stripped(item.url)
            item.message = URLCredentials.stripped(item.message)
            item.download = item.download?.strippingURLCredentials()
            return item
        }
        outcome.sdkCalls = sdkCalls?.map { call in
            var call = call
            call.url = URLCredentials.stripped(call.url)
            call.error = URLCredentials.stripped(call.error)
            return call
        }
        outcome.trace = trace?.map { URLCredentials.stripped($0) }
        if carried, !warnings.contains(where: { $0.code == Self.urlCredentialsWarning.code }) {
            outcome.warnings.append(Self.urlCredentialsWarning)
        }
        return outcome
    }
}

extension Outcome.Download {
    /// The download with its effective URL without a user name or password (``URLCredentials``).
    package func strippingURLCredentials() -> Outcome.Download {
        var download = self
        download.effectiveURL = URLCredentials.stripped(effectiveURL)
        return download
    }
}
