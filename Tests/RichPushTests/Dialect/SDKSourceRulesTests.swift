import Foundation
import Testing

@testable import RichPush

/// Each SDK's reading and naming as its source does it, where richpush once differed (the cases of
/// `docs/sdk-sources/*.md`, section "richpush today vs the source"; the rules and citations are in
/// `docs/sdks.md`).
@Suite struct SDKSourceRulesTests {
    enum Read: Equatable {
        case none, refused(ReasonCode), raises
        case items([String])
    }

    func read(_ sdk: String, _ payload: String) throws -> Read {
        let dialect = try #require(Dialect.named(sdk))
        switch dialect.readMedia(try JSONValue.parse(Array(payload.utf8))) {
        case .none: return .none
        case .refused(let reason, _, _, _): return .refused(reason)
        case .raises: return .raises
        case .items(let items, _): return .items(items.map(\.url))
        }
    }

    @Test(arguments: [
        // OneSignal: with an os_data dictionary only os_data.att is read.
        ("onesignal", #"{"os_data":{"i":"n1"},"att":{"a":"https://c/hero.jpg"}}"#, Read.none),
        (
            "onesignal", #"{"os_data":{"att":{"a":"https://c/hero.jpg"}},"att":{"b":"https://c/x.jpg"}}"#,
            .items(["https://c/hero.jpg"])
        ),
        // Values are trimmed of spaces and tabs, not newlines.
        ("onesignal", #"{"att":{"a":"  https://c/hero.jpg\t"}}"#, .items(["https://c/hero.jpg"])),
        ("onesignal", #"{"att":{"a":"https://c/hero.jpg\n"}}"#, .items(["https://c/hero.jpg\n"])),
        // A non-string value, an array or a string att, a non-dictionary os_data or custom: the extension raises.
        ("onesignal", #"{"att":{"a":7,"b":"https://c/hero.jpg"}}"#, .raises),
        ("onesignal", #"{"att":["https://c/hero.jpg"]}"#, .raises),
        ("onesignal", #"{"att":"https://c/hero.jpg"}"#, .raises),
        ("onesignal", #"{"os_data":"x","att":{"a":"https://c/hero.jpg"}}"#, .raises),
        ("onesignal", #"{"custom":[1],"att":{"a":"https://c/hero.jpg"}}"#, .raises),
        ("onesignal", #"{"att":[]}"#, .none),
        // Airship: entries it cannot use are dropped, the rest kept; wrongly typed fields invalidate.
        (
            "airship", #"{"com.urbanairship.media_attachment":{"url":["","https://c/hero.jpg"]}}"#,
            .items(["https://c/hero.jpg"])
        ),
        (
            "airship", #"{"com.urbanairship.media_attachment":{"urls":[{"url_id":"a"},{"url":"https://c/1.jpg"}]}}"#,
            .items(["https://c/1.jpg"])
        ),
        (
            "airship", #"{"com.urbanairship.media_attachment":{"urls":[{"url":"https://c/1.jpg","url_id":7}]}}"#,
            .refused(.attachmentNotAnObject)
        ),
        (
            "airship",
            #"{"com.urbanairship.media_attachment":{"url":"https://c/1.jpg","content":{"title":"T","extra":1}}}"#,
            .items(["https://c/1.jpg"])
        ),
        (
            "airship",
            #"{"com.urbanairship.media_attachment":{"url":"https://c/1.jpg","options":{"crop":{"x":0,"y":0,"width":1,"height":1,"mode":"fit"}}}}"#,
            .refused(.attachmentNotAnObject)
        ),
        (
            "airship", #"{"com.urbanairship.media_attachment":{"url":"https://c/1.jpg","options":{"time":""}}}"#,
            .refused(.attachmentNotAnObject)
        ),
        (
            "airship", #"{"com.urbanairship.media_attachment":{"url":"https://c/1.jpg","thumbnail_id":1}}"#,
            .refused(.attachmentNotAnObject)
        ),
        ("airship", #"{"com.urbanairship.media_attachment":"x"}"#, .none),
        // notifee: a non-empty attachments[0] decides over image; wrong types raise.
        (
            "notifee", #"{"notifee_options":{"image":"https://c/hero.png","ios":{"attachments":[{"id":"a"}]}}}"#,
            .refused(.attachmentURLMissing)
        ),
        ("notifee", #"{"notifee_options":{"image":"https://c/hero.png","ios":{"attachments":[{}]}}}"#, .raises),
        ("notifee", #"{"notifee_options":{"image":7}}"#, .raises),
        ("notifee", #"{"notifee_options":"x"}"#, .raises),
        ("notifee", #"{"notifee_options":{"ios":{"attachments":[{"url":"x"}]}}}"#, .items(["x"])),
        // Klaviyo: a type that is not a string is the default.
        ("klaviyo", #"{"rich-media":"https://c/hero.png","rich-media-type":7}"#, .items(["https://c/hero.png"])),
        // CleverTap: wrong types raise (no type check in its code).
        ("clevertap", #"{"ct_mediaUrl":5,"ct_mediaType":"image"}"#, .raises),
        ("clevertap", #"{"ct_mediaUrl":"https://c/hero.jpg","ct_mediaType":3}"#, .raises),
        // Customer.io: both delivery keys must be strings; a non-string or empty image is skipped.
        (
            "customerio",
            #"{"CIO-Delivery-ID":5,"CIO-Delivery-Token":"t","CIO":{"push":{"image":"https://c/hero.jpg"}}}"#,
            .refused(.attachmentURLMissing)
        ),
        ("customerio", #"{"CIO-Delivery-ID":"i","CIO-Delivery-Token":"t","CIO":{"push":{"image":5}}}"#, .none),
        ("customerio", #"{"CIO-Delivery-ID":"i","CIO-Delivery-Token":"t","CIO":{"push":{"image":""}}}"#, .none),
        // Firebase and Iterable read the URL with `as? String`.
        ("firebase", #"{"fcm_options":{"image":7}}"#, .none),
        ("iterable", #"{"itbl":{"attachment-url":7}}"#, .none),
    ])
    func readsAsItsSourceDoes(sdk: String, payload: String, expected: Read) throws {
        #expect(try read(sdk, payload) == expected, "\(sdk): \(payload)")
    }

    @Test(arguments: [
        // OneSignal's ?filename= splits on dots; the query items are searched last first, no dot needed.
        ("onesignal", "https://c/hero.webp?filename=.png", "image/webp", nil as String?, "png" as String?),
        ("onesignal", "https://c/hero.webp?v=png", "image/webp", nil, "png"),
        ("onesignal", "https://c/hero.webp?v=a.jpg&n=b.png", "image/webp", nil, "png"),
        // ?filename=png has one part (no name), so the query search finds it, as any item.
        ("onesignal", "https://c/hero.webp?filename=png", "image/webp", nil, "png"),
        // CleverTap's MIME fallback: image/jpeg gives .jpeg.
        ("clevertap", "https://c/hero", "image/jpeg", "Image", "jpeg"),
        // Klaviyo appends the type as written: '.png' gives name..png.
        ("klaviyo", "https://c/hero", "image/png", ".png", "png"),
        ("klaviyo", "https://c/hero", "image/png", "PNG", "PNG"),
        // Firebase and notifee replace 'image/' anywhere in the MIME type.
        ("firebase", "https://c/download", "x-image/png", nil, "png"),
        ("notifee", "https://c/download", "x-image/png", nil, "png"),
        // Iterable: the UUID and the suggested name, no separator.
        ("iterable", "https://c/hero.jpg", "image/jpeg", nil, "jpg"),
    ])
    func namesAsItsSourceDoes(sdk: String, url: String, mime: String, declared: String?, suffix: String?) throws {
        let dialect = try #require(Dialect.named(sdk))
        let naming = dialect.name(NamingInput(url: url, contentType: mime, declared: declared), stand: "tmp")
        #expect(naming.fileExtension == suffix, "\(sdk) \(url) \(mime): \(naming)")
        if sdk == "klaviyo", declared == ".png" { #expect(naming.name == "tmp..png") }
        if sdk == "iterable" { #expect(naming.name == "tmphero.jpg") }
    }

    @Test func airshipTypesTheBytesWithItsOwnTable() {
        // Exif JPEG (FF D8 FF E1) is not in Airship's table; JFIF (FF D8 FF E0) is.
        #expect(AirshipExtension.typeHint(head: [0xFF, 0xD8, 0xFF, 0xE1, 0, 0]) == nil)
        #expect(AirshipExtension.typeHint(head: [0xFF, 0xD8, 0xFF, 0xE0, 0, 0]) == "public.jpeg")
        #expect(AirshipExtension.typeHint(head: Array("\0\0\0\u{18}ftypisom".utf8)) == "public.mpeg-4")
        #expect(AirshipExtension.typeHint(head: Array("\0\0\0\u{18}ftypavc1".utf8)) == nil)
        // A MIME type whose preferred extension is not among the 13 gives no hint.
        #expect(AirshipExtension.typeHint(mime: "video/mpeg2") == nil)
        #expect(AirshipExtension.typeHint(mime: "image/png")?.uti == "public.png")
    }

    @Test func aRaisingExtensionDeliversThePushAsSent() throws {
        let root = try JSONValue.parse(Array(#"{"aps":{"alert":{"title":"T"}},"att":{"a":7}}"#.utf8))
        let delivered = Dialect.oneSignal.delivered(.fallback, attached: 0, root: root, reason: .extensionRaised)
        #expect(delivered.content == "original")
        #expect(delivered.changes.isEmpty)
    }

    @Test func airshipAppliesItsTextWithNoMedia() throws {
        let root = try JSONValue.parse(
            Array(
                #"{"aps":{"alert":{"title":"T"}},"com.urbanairship.media_attachment":{"url":[],"content":{"title":"Over"}}}"#
                    .utf8))
        let delivered = Dialect.airship.delivered(.noAttachment, attached: 0, root: root)
        #expect(delivered.title == "Over")
        // Invalid: the push as sent.
        let invalid = try JSONValue.parse(
            Array(
                #"{"aps":{"alert":{"title":"T"}},"com.urbanairship.media_attachment":{"content":{"title":"Over"}}}"#
                    .utf8))
        #expect(Dialect.airship.delivered(.fallback, attached: 0, root: invalid).title == "T")
    }

    /// A run without --sdk reads Braze's keys; a payload written for another SDK says so.
    @Test func anotherSDKsPayloadIsNotAFalseGreen() throws {
        let text = #"{"aps":{"alert":"hi","mutable-content":1},"os_data":{"att":{"a":"https://c/x.jpg"}}}"#
        guard case .decided(let outcome, _) = PayloadInspector.inspect(Array(text.utf8)) else {
            Issue.record("Braze's extension reads no media here")
            return
        }
        #expect(outcome.verdict == .noAttachment)
        #expect(outcome.warnings.map(\.code) == ["other-sdk-payload"])
        #expect(outcome.hint?.contains("--sdk onesignal") == true)
        // As OneSignal's extension reads it, there is media.
        guard case .media(let items, _, _) = PayloadInspector.inspect(Array(text.utf8), dialect: .oneSignal) else {
            Issue.record("OneSignal reads os_data.att")
            return
        }
        #expect(items.map(\.url) == ["https://c/x.jpg"])
        // A plain push without media names no SDK.
        guard case .decided(let plain, _) = PayloadInspector.inspect(Array(#"{"aps":{"alert":"hi"}}"#.utf8)) else {
            return
        }
        #expect(plain.warnings.isEmpty)
    }
}
