import Foundation
import Testing

@testable import RichPush

/// `ab.att.url` read as the extension's `URL(string:)` reads it, over hostile and unusual inputs.
///
/// Each row's `requested` is what `URL(string:)?.absoluteString` answered on this toolchain
/// (swift-foundation's RFC 3986 parser, the one iOS 17 and later use), recorded by a probe script
/// and pinned here: if a toolchain reads a row differently, this test says which.
@Suite struct AttachmentURLTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let written: String
        /// The URL the device requests; nil when URL(string:) returns nil.
        let requested: String?
        /// Whether the device cannot request it at all (invalid-url).
        let refused: Bool
        /// The warning codes, in order.
        let warnings: [String]

        var testDescription: String { written.escapingControlCharacters }
    }

    static let host = "https://cdn.example.com"

    static let rows: [Row] = [
        // As written.
        Row(written: host + "/hero.jpg", requested: host + "/hero.jpg", refused: false, warnings: []),
        Row(written: host + "/a%20b.jpg", requested: host + "/a%20b.jpg", refused: false, warnings: []),
        Row(written: host + "/%E9.jpg", requested: host + "/%E9.jpg", refused: false, warnings: []),
        Row(written: host + "/a/../b.jpg", requested: host + "/a/../b.jpg", refused: false, warnings: []),
        Row(written: host + "/a.jpg#frag", requested: host + "/a.jpg#frag", refused: false, warnings: []),
        Row(written: host + "/a:b.jpg", requested: host + "/a:b.jpg", refused: false, warnings: []),
        Row(
            written: "HTTPS://CDN.EXAMPLE.COM/A.jpg", requested: "HTTPS://CDN.EXAMPLE.COM/A.jpg", refused: false,
            warnings: []),
        Row(written: "https://[::1]:8080/a.jpg", requested: "https://[::1]:8080/a.jpg", refused: false, warnings: []),
        Row(
            written: "https://user:pass@cdn.example.com/a.jpg", requested: "https://user:pass@cdn.example.com/a.jpg",
            refused: false, warnings: []),
        Row(
            written: "https://@cdn.example.com/a.jpg", requested: "https://@cdn.example.com/a.jpg", refused: false,
            warnings: []),
        Row(written: host + ":/a.jpg", requested: host + ":/a.jpg", refused: false, warnings: []),
        Row(written: host + ":65535/a.jpg", requested: host + ":65535/a.jpg", refused: false, warnings: []),
        Row(
            written: "https://xn--bcher-kva.example/a.jpg", requested: "https://xn--bcher-kva.example/a.jpg",
            refused: false, warnings: []),
        // Whitespace: never trimmed. At the start URL(string:) gives nil; at the end it is kept, encoded.
        Row(written: " " + host + "/hero.jpg", requested: nil, refused: true, warnings: []),
        Row(written: "\t" + host + "/hero.jpg", requested: nil, refused: true, warnings: []),
        Row(
            written: host + "/hero.jpg ", requested: host + "/hero.jpg%20", refused: false,
            warnings: ["url-trailing-whitespace", "url-encoded"]),
        Row(
            written: host + "/hero.jpg\n", requested: host + "/hero.jpg%0A", refused: false,
            warnings: ["url-trailing-whitespace", "url-encoded"]),
        Row(
            written: host + "/a.jpg\u{A0}", requested: host + "/a.jpg%C2%A0", refused: false,
            warnings: ["url-trailing-whitespace", "url-encoded"]),
        Row(
            written: host + "/my hero.jpg", requested: host + "/my%20hero.jpg", refused: false,
            warnings: ["url-encoded"]),
        Row(
            written: host + "/my\thero.jpg", requested: host + "/my%09hero.jpg", refused: false,
            warnings: ["url-encoded"]),
        Row(
            written: host + "/my\nhero.jpg", requested: host + "/my%0Ahero.jpg", refused: false,
            warnings: ["url-encoded"]),
        Row(
            written: host + "/a.jpg?q=a b", requested: host + "/a.jpg?q=a%20b", refused: false,
            warnings: ["url-encoded"]),
        Row(
            written: host + "/a.jpg#fr ag", requested: host + "/a.jpg#fr%20ag", refused: false,
            warnings: ["url-encoded"]),
        Row(
            written: "https://us er@cdn.example.com/a.jpg", requested: "https://us%20er@cdn.example.com/a.jpg",
            refused: false, warnings: ["url-encoded"]),
        Row(written: "https://cdn exam.com/a.jpg", requested: nil, refused: true, warnings: []),
        // Non-ASCII: UTF-8, percent-encoded in the path; IDNA (xn--) in the host.
        Row(
            written: host + "/héro.jpg", requested: host + "/h%C3%A9ro.jpg", refused: false,
            warnings: ["url-encoded"]),
        Row(
            written: host + "/😀.jpg", requested: host + "/%F0%9F%98%80.jpg", refused: false,
            warnings: ["url-encoded"]),
        Row(
            written: host + "/\u{200B}a.jpg", requested: host + "/%E2%80%8Ba.jpg", refused: false,
            warnings: ["url-encoded"]),
        Row(
            written: "https://bücher.example/a.jpg", requested: "https://xn--bcher-kva.example/a.jpg", refused: false,
            warnings: ["url-encoded"]),
        // A '%' without two hex digits is a literal percent sign.
        Row(
            written: host + "/100%.jpg", requested: host + "/100%25.jpg", refused: false,
            warnings: ["url-stray-percent"]),
        Row(
            written: host + "/%zz.jpg", requested: host + "/%25zz.jpg", refused: false,
            warnings: ["url-stray-percent"]),
        Row(written: host + "/%4.jpg", requested: host + "/%254.jpg", refused: false, warnings: ["url-stray-percent"]),
        Row(
            written: host + "/a.jpg?x=%", requested: host + "/a.jpg?x=%25", refused: false,
            warnings: ["url-stray-percent"]),
        // Characters RFC 3986 has no place for, percent-encoded.
        Row(written: host + "/a|b.jpg", requested: host + "/a%7Cb.jpg", refused: false, warnings: ["url-encoded"]),
        Row(written: host + "/a^b.jpg", requested: host + "/a%5Eb.jpg", refused: false, warnings: ["url-encoded"]),
        Row(written: host + "/a\\b.jpg", requested: host + "/a%5Cb.jpg", refused: false, warnings: ["url-encoded"]),
        Row(written: host + "/a\"b.jpg", requested: host + "/a%22b.jpg", refused: false, warnings: ["url-encoded"]),
        Row(
            written: host + "/a<b>.jpg", requested: host + "/a%3Cb%3E.jpg", refused: false,
            warnings: ["url-encoded"]),
        Row(
            written: host + "/a{b}.jpg", requested: host + "/a%7Bb%7D.jpg", refused: false,
            warnings: ["url-encoded"]),
        Row(written: host + "/a`b.jpg", requested: host + "/a%60b.jpg", refused: false, warnings: ["url-encoded"]),
        Row(
            written: host + "/a[1].jpg", requested: host + "/a%5B1%5D.jpg", refused: false,
            warnings: ["url-encoded"]),
        Row(
            written: host + "/a.jpg#a#b", requested: host + "/a.jpg#a%23b", refused: false,
            warnings: ["url-encoded"]),
        Row(written: host + "/a.jpg\u{0}", requested: host + "/a.jpg%00", refused: false, warnings: ["url-encoded"]),
        Row(written: host + "/\u{7F}.jpg", requested: host + "/%7F.jpg", refused: false, warnings: ["url-encoded"]),
        Row(
            written: host + "/a\r\u{1B}[2J.jpg", requested: host + "/a%0D%1B%5B2J.jpg", refused: false,
            warnings: ["url-encoded"]),
        // What the device cannot request.
        Row(written: "", requested: nil, refused: true, warnings: []),
        Row(written: " ", requested: "%20", refused: true, warnings: []),
        Row(written: "cdn.example.com/a.jpg", requested: "cdn.example.com/a.jpg", refused: true, warnings: []),
        Row(written: "//cdn.example.com/a.jpg", requested: "//cdn.example.com/a.jpg", refused: true, warnings: []),
        Row(
            written: "https:cdn.example.com/a.jpg", requested: "https:cdn.example.com/a.jpg", refused: true,
            warnings: []),
        Row(written: "https:///a.jpg", requested: "https:///a.jpg", refused: true, warnings: []),
        Row(written: "https://[::1/a.jpg", requested: nil, refused: true, warnings: []),
        Row(written: host + "\\a.jpg", requested: nil, refused: true, warnings: []),
        Row(written: host + ":abc/a.jpg", requested: nil, refused: true, warnings: []),
        Row(written: host + ":-1/a.jpg", requested: nil, refused: true, warnings: []),
        Row(written: host + ":65536/a.jpg", requested: host + ":65536/a.jpg", refused: true, warnings: []),
        Row(written: host + ":99999/a.jpg", requested: host + ":99999/a.jpg", refused: true, warnings: []),
        // Other schemes parse; App Transport Security and the fetch policy judge them later.
        Row(written: "file:///etc/passwd", requested: "file:///etc/passwd", refused: false, warnings: []),
        Row(
            written: "ftp://cdn.example.com/a.jpg", requested: "ftp://cdn.example.com/a.jpg", refused: false,
            warnings: []),
    ]

    @Test(arguments: rows)
    func readsTheURLAsURLStringDoes(row: Row) {
        let reading = AttachmentURL(row.written)
        #expect(reading.requested == row.requested)
        // The table is Foundation's own answer on this toolchain.
        #expect(URL(string: row.written)?.absoluteString == row.requested)
        #expect((reading.refusal != nil) == row.refused, "\(reading.refusal?.message ?? "not refused")")
        // The RFC 3986 warnings; `url-needs-ios-17` comes first exactly when the old parser refuses the text.
        let version = reading.warnings.filter { $0.code == "url-needs-ios-17" }
        #expect(
            reading.warnings.filter { $0.code != "url-needs-ios-17" }.map(\.code) == row.warnings,
            "\(reading.warnings.map(\.message))")
        #expect(
            version.count == (!row.refused && AttachmentURL.legacyRefusal(of: row.written) != nil ? 1 : 0),
            "\(reading.warnings.map(\.message))")
        if let requested = row.requested, !row.refused {
            for warning in reading.warnings {
                #expect(warning.message.contains(requested), "each warning names the URL the device requests")
            }
        }
    }

    @Test func aLeadingSpaceIsRefusedWithAHintToRemoveIt() throws {
        let refusal = try #require(AttachmentURL(" https://cdn.example.com/hero.jpg").refusal)
        #expect(refusal.message.contains("starts with whitespace"), "\(refusal.message)")
        #expect(refusal.message.contains("UNError 100"))
        #expect(refusal.hint?.contains("does not trim") == true)
    }

    @Test func theEncodedWarningNamesTheCharacters() throws {
        let warning = try #require(
            AttachmentURL("https://cdn.example.com/my héro|x.jpg").warnings.first { $0.code == "url-encoded" })
        #expect(warning.message.contains("spaces, 'é', '|'"), "\(warning.message)")
        #expect(warning.message.contains("https://cdn.example.com/my%20h%C3%A9ro%7Cx.jpg"))
    }

    @Test func aPortPastTheLastOneSaysSo() throws {
        let refusal = try #require(AttachmentURL("https://cdn.example.com:99999/a.jpg").refusal)
        #expect(refusal.message.contains("port 99999"), "\(refusal.message)")
        #expect(refusal.message.contains("65535"))
    }
}
