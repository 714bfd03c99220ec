import RichPush
import Testing

/// Each SDK's naming rule as a table: URL, Content-Disposition, Content-Type and declared type in,
/// the extension the SDK writes and the rule that chose it out.
@Suite struct DialectNamingTests {
    struct Case: Sendable, CustomStringConvertible {
        var sdk: String
        var url: String
        var contentType: String?
        var disposition: String? = nil
        var declared: String? = nil
        /// The extension the SDK writes; nil: it makes no attachment (or one iOS cannot type).
        var expected: String?
        var rule: String
        var description: String { "\(sdk) \(url) \(contentType ?? "-") \(disposition ?? "-") \(declared ?? "-")" }
    }

    static let photoPNG = "https://cdn.example.com/photo.jpg"
    static let cases: [Case] = [
        // The issue's example: a PNG served from .../photo.jpg.
        Case(sdk: "firebase", url: photoPNG, contentType: "image/png", expected: "jpg", rule: "url-path"),
        Case(sdk: "iterable", url: photoPNG, contentType: "image/png", expected: "jpg", rule: "url-path"),
        Case(sdk: "onesignal", url: photoPNG, contentType: "image/png", expected: "png", rule: "content-type"),
        Case(
            sdk: "braze", url: photoPNG, contentType: "image/png", declared: "jpg", expected: "jpg",
            rule: "declared-type"),
        Case(
            sdk: "klaviyo", url: photoPNG, contentType: "image/png", declared: "jpg", expected: "jpg",
            rule: "declared-type"),
        Case(sdk: "expo", url: photoPNG, contentType: "image/png", expected: "jpg", rule: "fixed"),
        Case(sdk: "moengage", url: photoPNG, contentType: "image/png", expected: "png", rule: "content-type"),
        Case(sdk: "airship", url: photoPNG, contentType: "image/png", expected: "jpg", rule: "url-path"),
        // A 404 HTML page at a .jpg URL is named by the URL, never checked.
        Case(
            sdk: "onesignal", url: photoPNG, contentType: "text/html; charset=utf-8", expected: "jpg", rule: "url-path"),
        // OneSignal matches case-sensitively: .JPG is skipped unless something else rescues it.
        Case(
            sdk: "onesignal", url: "https://cdn.example.com/PHOTO.JPG", contentType: "application/octet-stream",
            expected: nil, rule: "none"),
        Case(
            sdk: "onesignal", url: "https://cdn.example.com/PHOTO.JPG", contentType: "image/jpeg",
            expected: "jpeg", rule: "content-type"),
        Case(
            sdk: "onesignal", url: "https://cdn.example.com/avatar?filename=pic.png",
            contentType: "application/octet-stream", expected: "png", rule: "query-filename"),
        // `filename=abc` carries no extension and is ignored; a later query item with one is taken.
        Case(
            sdk: "onesignal", url: "https://cdn.example.com/avatar?filename=abc&alt=look.gif",
            contentType: "application/octet-stream", expected: "gif", rule: "query-item"),
        Case(
            sdk: "onesignal", url: "https://cdn.example.com/avatar?s=200&v=4", contentType: "image/png",
            expected: "png", rule: "content-type"),
        // suggestedFilename: Content-Disposition first, else the URL, with a MIME extension when none.
        Case(
            sdk: "customerio", url: "https://cdn.example.com/download?id=1", contentType: "application/octet-stream",
            disposition: "attachment; filename=\"promo.png\"", expected: "png", rule: "content-disposition"),
        Case(
            sdk: "firebase", url: "https://cdn.example.com/avatar", contentType: "image/png", expected: "png",
            rule: "content-type"),
        Case(
            sdk: "iterable", url: "https://cdn.example.com/avatar", contentType: "application/octet-stream",
            expected: nil, rule: "none"),
        // Firebase takes the image subtype, refusing one with '/'; notifee takes it raw.
        Case(
            sdk: "firebase", url: "https://cdn.example.com/logo", contentType: "image/svg+xml", expected: "svg+xml",
            rule: "content-type"),
        Case(
            sdk: "firebase", url: "https://cdn.example.com/logo", contentType: "image/x/../../evil", expected: nil,
            rule: "none"),
        Case(
            sdk: "notifee", url: "https://cdn.example.com/logo", contentType: "image/svg+xml", expected: "svg+xml",
            rule: "content-type"),
        Case(
            sdk: "notifee", url: "https://cdn.example.com/favicon", contentType: "image/x-icon", expected: "x-icon",
            rule: "content-type"),
        // CleverTap: the declared kind wins (a GIF sent as "image" is .jpg), else jpeg/png/gif by MIME, else '.'.
        Case(
            sdk: "clevertap", url: "https://cdn.example.com/a.gif", contentType: "image/gif", declared: "image",
            expected: "jpg", rule: "declared-type"),
        Case(
            sdk: "clevertap", url: "https://cdn.example.com/a.gif", contentType: "image/gif", declared: "gif",
            expected: "gif", rule: "content-type"),
        Case(
            sdk: "clevertap", url: "https://cdn.example.com/a.gif", contentType: "application/octet-stream",
            declared: "gif", expected: nil, rule: "none"),
        // Airship: a known suffix without a dot counts, and iOS then finds no extension.
        Case(
            sdk: "airship", url: "https://cdn.example.com/img/abcpng", contentType: "image/png", expected: nil,
            rule: "url-path"),
        Case(
            sdk: "airship", url: "https://cdn.example.com/img/photo", contentType: "image/png", expected: nil,
            rule: "type-hint"),
        Case(
            sdk: "moengage", url: "https://cdn.example.com/photo.png", contentType: "application/octet-stream",
            expected: "png", rule: "url-path"),
    ]

    @Test(arguments: cases)
    func namesTheFileAsTheSDKDoes(_ example: Case) throws {
        let dialect = try #require(Dialect.named(example.sdk))
        let naming = dialect.name(
            NamingInput(
                url: example.url, contentType: example.contentType, contentDisposition: example.disposition,
                declared: example.declared))
        #expect(naming.fileExtension == example.expected, "\(naming)")
        #expect(naming.rule == example.rule, "\(naming)")
    }

    @Test func oneSignalSaysWhyAnUppercaseExtensionIsSkipped() throws {
        let naming = Dialect.oneSignal.name(
            NamingInput(url: "https://cdn.example.com/PHOTO.JPG", contentType: "application/octet-stream"))
        #expect(naming.skipped?.contains("case-sensitively") == true, "\(naming)")
    }

    @Test func airshipHintsTheTypeFromTheBytesWhenTheServerSaysNothing() throws {
        let png = try #require(AttachmentFormat.forExtension("png"))
        let naming = Dialect.airship.name(
            NamingInput(
                url: "https://cdn.example.com/img/photo", contentType: "application/octet-stream",
                head: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]))
        #expect(naming.typeHint == "public.png")
        #expect(naming.iosFormat == png)
    }

    @Test(
        arguments: [
            ("https://cdn.example.com/a/b/photo.jpg", nil, nil, "photo.jpg"),
            ("https://cdn.example.com/avatar", "image/png", nil, "avatar.png"),
            ("https://cdn.example.com/avatar", "application/octet-stream", nil, "avatar"),
            ("https://cdn.example.com/", "image/jpeg", nil, "cdn.example.com"),
            ("https://cdn.example.com/x", "image/jpeg", "inline; filename=\"../../etc/p.gif\"", "p.gif"),
            ("https://cdn.example.com/x", nil, "attachment; filename*=UTF-8''caf%C3%A9.png", "café.png"),
            ("https://cdn.example.com/my%20pic.jpg", "image/jpeg", nil, "my pic.jpg"),
        ] as [(String, String?, String?, String)])
    func suggestedFilenameFollowsFoundationsOrder(url: String, type: String?, disposition: String?, name: String) {
        #expect(SuggestedFilename.of(url: url, contentType: type, contentDisposition: disposition).name == name)
    }
}

/// notifee's unsanitised subtype, found by the fuzz target: a '/' in it makes a path, reported as skipped.
@Suite struct NotifeeSubtypePathTests {
    @Test func aSlashInTheSubtypeIsSkippedNotUsedAsAName() {
        let naming = Dialect.notifee.name(
            NamingInput(url: "https://cdn.example.com/logo", contentType: "image/x/../../evil"))
        #expect(naming.skipped?.contains("makes a path") == true, "\(naming)")
        #expect(naming.iosFormat == nil)
    }
}
