import Foundation
import RichPush
import TestSupport
import Testing

/// Each SDK's keys, `--sdk auto` over every sample, and what the user sees.
@Suite struct DialectReadingTests {
    func root(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

    @Test(arguments: [
        ("onesignal", #"{"os_data":{"att":{"a":"https://x/1.jpg","b":"https://x/2.png"}}}"#, 2),
        ("onesignal", #"{"custom":{"i":"1"},"att":{"a":"https://x/1.jpg"}}"#, 1),
        ("airship", #"{"com.urbanairship.media_attachment":{"url":"https://x/1.jpg"}}"#, 1),
        ("airship", #"{"com.urbanairship.media_attachment":{"url":["https://x/1.jpg","https://x/2.jpg"]}}"#, 2),
        (
            "airship",
            #"{"com.urbanairship.media_attachment":{"urls":[{"url":"https://x/1.jpg","url_id":"a"}],"url":"https://x/9.jpg"}}"#,
            1
        ),
        ("firebase", #"{"fcm_options":{"image":"https://x/1.jpg"}}"#, 1),
        ("iterable", #"{"itbl":{"attachment-url":"https://x/1.jpg"}}"#, 1),
        ("clevertap", #"{"ct_mediaUrl":"https://x/1.jpg","ct_mediaType":"image"}"#, 1),
        (
            "customerio",
            #"{"CIO-Delivery-ID":"d","CIO-Delivery-Token":"t","CIO":{"push":{"image":"https://x/1.jpg"}}}"#, 1
        ),
        ("klaviyo", #"{"rich-media":"https://x/1"}"#, 1),
        ("moengage", #"{"moengage":{"media-attachment":"https://x/1.jpg","media-type":"image"}}"#, 1),
        ("expo", #"{"body":{"_richContent":{"image":"https://x/1.jpg"}}}"#, 1),
        (
            "notifee",
            #"{"notifee_options":{"ios":{"attachments":[{"url":"https://x/1.jpg"},{"url":"https://x/2.jpg"}]}}}"#, 1
        ),
        ("notifee", #"{"notifee_options":{"image":"https://x/1.jpg"}}"#, 1),
    ])
    func readsItsOwnKeys(sdk: String, payload: String, count: Int) throws {
        let dialect = try #require(Dialect.named(sdk))
        guard case .items(let items, _) = dialect.readMedia(try root(payload)) else {
            Issue.record("\(sdk) read no media from \(payload)")
            return
        }
        #expect(items.count == count)
        #expect(items.first?.url.hasPrefix("https://x/1") == true, "payload order first")
    }

    @Test func klaviyoDefaultsTheTypeToJpg() throws {
        let reading = Dialect.klaviyo.readMedia(try root(#"{"rich-media":"https://x/1"}"#))
        #expect(reading == .items([MediaItem(url: "https://x/1", declared: "jpg")], warnings: []))
    }

    @Test func gatesRefuseWhatTheSDKDoesNotHandle() throws {
        let cio = Dialect.customerIO.readMedia(try root(#"{"CIO":{"push":{"image":"https://x/1.jpg"}}}"#))
        guard case .refused(let reason, let message, _, _) = cio else {
            Issue.record("\(cio)")
            return
        }
        #expect(reason == .attachmentURLMissing)
        #expect(message.contains("CIO-Delivery-ID"))
        let ct = Dialect.cleverTap.readMedia(try root(#"{"ct_mediaUrl":"https://x/1.jpg"}"#))
        #expect({ if case .refused(.attachmentTypeMissing, _, _, _) = ct { true } else { false } }())
        // Airship: an invalid field means no mutation at all.
        let crop = Dialect.airship.readMedia(
            try root(#"{"com.urbanairship.media_attachment":{"url":"https://x/1.jpg","options":{"crop":{"x":0}}}}"#))
        #expect({ if case .refused(.attachmentNotAnObject, _, _, _) = crop { true } else { false } }())
        // Airship: url: [] is valid and yields no media (its 'content' text still applies).
        let empty = Dialect.airship.readMedia(try root(#"{"com.urbanairship.media_attachment":{"url":[]}}"#))
        #expect(empty == .items([], warnings: []))
        // A Braze payload means nothing to OneSignal.
        let braze = Dialect.oneSignal.readMedia(try root(#"{"ab":{"att":{"url":"https://x/1.jpg","type":"jpg"}}}"#))
        #expect({ if case .none = braze { true } else { false } }())
    }

    @Test func autoDetectionPicksEachSamplesOwnSDK() throws {
        for expected in SamplePayloads.expectations {
            let detected = DialectDetection.detect(try JSONValue.parse(try SamplePayloads.bytes(expected.name)))
            let prefix = expected.name.split(separator: "-").first.map(String.init) ?? ""
            let wanted = Dialect.named(prefix)?.name ?? "braze"
            #expect(detected.name == wanted, "\(expected.name)")
        }
    }

    @Test func autoDetectionPrefersNamespacedKeysToFirebasesAndDefaultsToBraze() throws {
        // A notifee push sent through FCM carries Firebase's keys too.
        let both = try root(#"{"gcm.message_id":"1","fcm_options":{"image":"https://x/1"},"notifee_options":{}}"#)
        #expect(DialectDetection.detect(both) == .notifee)
        #expect(DialectDetection.detect(try root(#"{"aps":{"alert":"a"}}"#)) == .braze)
        #expect(DialectDetection.detect(nil) == .braze)
        #expect(Set(DialectDetection.order.map(\.name)) == Set(Dialect.all.map(\.name)), "every dialect is tried")
    }

    @Test func everyDialectHasAUniqueNameAndKeys() {
        #expect(Set(Dialect.all.map(\.name)).count == Dialect.all.count)
        for dialect in Dialect.all {
            #expect(!dialect.media.keys.isEmpty, "\(dialect.name)")
            #expect(!dialect.markers.isEmpty, "\(dialect.name)")
            #expect(Dialect.named(dialect.name.uppercased()) == dialect)
        }
        #expect(DialectChoice(name: "auto") == .auto)
        #expect(DialectChoice(name: "nonesuch") == nil)
    }

    static let alert = #""aps":{"alert":{"title":"T","body":"B"},"mutable-content":1}"#

    @Test func deliversTheOriginalOrTheSDKsCopyByVerdict() throws {
        let iterable = try root(#"{\#(Self.alert),"itbl":{"messageId":"m","actionButtons":[{"identifier":"a"}]}}"#)
        let expired = Dialect.iterable.delivered(.expired, attached: 0, root: iterable)
        #expect(expired.content == "best-attempt")
        #expect(expired.attachments == 0)
        #expect(expired.changes.first?.contains("category") == true)
        #expect(Dialect.braze.delivered(.expired, attached: 0, root: iterable).content == "original")
        #expect(Dialect.iterable.delivered(.rejected, attached: 0, root: nil).content == "nothing")
        #expect(Dialect.iterable.delivered(.notInvoked, attached: 0, root: iterable).content == "original")
        let attached = Dialect.iterable.delivered(.attached, attached: 1, root: iterable)
        #expect(attached.content == "composed")
        #expect(attached.attachments == 1)
        #expect(attached.title == "T" && attached.body == "B")
    }

    @Test func textOverridesShowWhenAttachedAndFollowEachSDKsFailureRule() throws {
        let airship = try root(
            #"{\#(Self.alert),"com.urbanairship.media_attachment":{"url":"https://x/1.jpg","content":{"title":"New"}}}"#
        )
        #expect(Dialect.airship.delivered(.attached, attached: 1, root: airship).title == "New")
        // Airship loses its overrides on failure; notifee's copy keeps them on failure and loses them on expiry.
        #expect(Dialect.airship.delivered(.fallback, attached: 0, root: airship).title == "T")
        let notifee = try root(#"{\#(Self.alert),"notifee_options":{"title":"Ana","image":"https://x/1.jpg"}}"#)
        let failed = Dialect.notifee.delivered(.fallback, attached: 0, root: notifee)
        #expect(failed.title == "Ana")
        #expect(failed.content == "best-attempt")
        #expect(Dialect.notifee.delivered(.expired, attached: 0, root: notifee).title == "T")
        // Customer.io: the original when the image is not done.
        let cio = try root(#"{\#(Self.alert),"CIO-Delivery-ID":"d","CIO-Delivery-Token":"t"}"#)
        #expect(Dialect.customerIO.delivered(.expired, attached: 0, root: cio).content == "original")
    }
}
