import Foundation
import Testing

@testable import RichPush

/// Every place richpush normalises what it reads, with the exact bytes, and what the device does
/// with the same bytes (docs/platform.md, section 7, cites each rule): never more forgiving than
/// the phone, and never less.
@Suite struct NormalisationAuditTests {
    func inspect(_ text: String) -> Inspection {
        PayloadInspector.inspect(Array(text.utf8), pushType: .alert)
    }

    func payload(type: String) -> String {
        #"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/a.jpg","type":"\#(type)"}}}"#
    }

    /// `ab.att.type` is the suffix the file is saved under, and iOS reads a file's type from its
    /// extension whatever its case: lower case and one leading dot change nothing the device sees.
    @Test(arguments: [("JPG", "jpg"), ("Png", "png"), (".gif", "gif"), (".MP4", "mp4"), ("jpeg", "jpeg")])
    func aTypeInAnotherCaseOrWithOneDotIsTheExtensionTheDeviceReads(type: String, expected: String) {
        guard case .media(let items, _, let warnings) = inspect(payload(type: type)),
            let declared = items.first?.declared, let format = AttachmentFormat.forExtension(declared)
        else {
            Issue.record("'\(type)' is an extension iOS reads")
            return
        }
        #expect(declared == type, "the type as written is kept for the report")
        #expect(AttachmentFormat.normalizedExtension(declared) == expected)
        #expect(format.extensions.contains(expected))
        #expect(warnings.contains { $0.code == "type-normalized" } == (type != expected))
    }

    /// Whitespace, a second dot or a path are not an extension the device maps to a type.
    @Test(arguments: [" jpg", "jpg ", "..jpg", "jpg.", "j pg", "../x", ""])
    func aTypeTheDeviceCannotMapIsNotRepaired(type: String) {
        guard case .decided(let outcome, _) = inspect(payload(type: type)) else {
            Issue.record("'\(type)' must not be repaired into a supported type")
            return
        }
        #expect(outcome.verdict == .fallback)
    }

    /// APNs documents `mutable-content` as the number 1; a number equal to 1 is that number as
    /// JSONSerialization reads it (1.0 is NSNumber 1), a string or a boolean is not.
    @Test(arguments: [("1", true), ("1.0", true), ("1e0", true), (#""1""#, false), ("true", false), ("0", false)])
    func mutableContentIsTheNumberOne(value: String, invoked: Bool) {
        let text =
            #"{"aps":{"alert":"Hi","mutable-content":\#(value)},"ab":{"att":{"url":"https://cdn.example.com/a.jpg","type":"jpg"}}}"#
        switch inspect(text) {
        case .media:
            #expect(invoked, "\(value) must not run the extension")
        case .decided(let outcome, _):
            #expect(!invoked, "\(value) runs the extension: \(outcome.reason)")
            #expect(outcome.verdict == .notInvoked)
        }
    }

    /// ATS matches exception domains without regard to case, and only whole labels.
    @Test func atsMatchesDomainsWithoutCaseAndNeverATrailingDotOrAPartialLabel() {
        let ats = AppTransportSecurity([
            "NSExceptionDomains": [
                "CDN.Example.com": ["NSExceptionAllowsInsecureHTTPLoads": true, "NSIncludesSubdomains": true]
            ]
        ])
        func allowed(_ url: String) -> Bool {
            if case .allowed = ats.decide(url) { return true }
            return false
        }
        #expect(allowed("http://cdn.example.com/a.jpg"))
        #expect(allowed("http://CDN.EXAMPLE.COM/a.jpg"))
        #expect(allowed("http://img.cdn.example.com/a.jpg"))
        #expect(!allowed("http://xcdn.example.com/a.jpg"), "a partial label is another domain")
        #expect(!allowed("http://cdn.example.com./a.jpg"), "a trailing dot is not the listed name")
    }

    /// iOS shows the content extension whose category list holds `aps.category` exactly; a category
    /// that differs in case or spaces shows the default view (richpush only hints at the near miss).
    @Test(arguments: ["Trivia", "trivia ", " trivia", "TRIVIA"])
    func aCategoryMustMatchExactly(category: String) throws {
        let game = ContentExtension(
            name: "NotificationContent", plist: "a", categories: ["trivia"], initialContentSizeRatio: 0.5)
        let root = try JSONValue.parse(Array(#"{"aps":{"alert":"x","category":"\#(category)"}}"#.utf8))
        let outcome = ContentRouter(extensions: [game]).route(root)
        #expect(outcome.outcome == .default)
        #expect(outcome.hint?.contains("differs only in case or spaces") == true)
    }
}
