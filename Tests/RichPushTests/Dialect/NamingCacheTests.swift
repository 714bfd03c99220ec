import Foundation
import Testing

@testable import RichPush

/// The per-device shortcuts of a bench's pipeline give what the long way gives.
@Suite struct NamingCacheTests {
    static let inputs = [
        NamingInput(url: "https://cdn.example.com/photo.jpg", contentType: "image/png", declared: "jpg"),
        NamingInput(url: "https://cdn.example.com/photo.jpg", contentType: "image/png"),
        NamingInput(url: "https://cdn.example.com/photo", contentType: "image/gif"),
        NamingInput(
            url: "https://cdn.example.com/a.png?x=1", contentType: nil,
            contentDisposition: "attachment; filename=b.webp"),
    ]

    /// Every dialect, every input, asked twice and interleaved: the cache answers as the dialect
    /// does, and a different input, stand-in or dialect never gets another's name.
    @Test func answersAsTheDialectDoes() {
        let cache = NamingCache()
        for _ in 0..<2 {
            for dialect in [Dialect.braze, .oneSignal, .airship] + Dialect.all {
                for input in Self.inputs {
                    for stand in ["tmp", "a1b2c3"] {
                        #expect(
                            cache.name(input, stand: stand, dialect: dialect) == dialect.name(input, stand: stand),
                            "\(dialect.name) \(input.url) \(stand)")
                    }
                }
            }
        }
    }

    @Test func readsTheSchemeAsURLComponentsDoes() {
        for url in [
            "https://a/b", "HTTP://a/b", "hTTps://a", "ftp://x", "a+b-c.d://x", "no-colon", "", ":x", "1abc://x",
            "ht tp://x", "mailto:a@b", "https",
        ] {
            #expect(FetchEngine.scheme(of: url) == (URLComponentsScheme.of(url)), "\(url)")
        }
    }

    @Test func writesTheStandInAsPrintfDoes() {
        for url in ["", "https://cdn.example.com/hero.jpg", "x", String(repeating: "é", count: 40)] {
            var hash: UInt32 = 2_166_136_261
            for byte in url.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
            #expect(ServiceExtension.standIn(for: url) == String(format: "%06x", hash & 0xFF_FFFF))
        }
    }
}

private enum URLComponentsScheme {
    static func of(_ url: String) -> String { URLComponents(string: url)?.scheme?.lowercased() ?? "" }
}
