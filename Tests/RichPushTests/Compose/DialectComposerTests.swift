import Testing

@testable import RichPush

/// OneSignal's and Airship's request bodies, composed into the payloads their SDKs read.
@Suite struct DialectComposerTests {
    @Test func oneSignalAttachmentsBecomeAttWithMutableContent() throws {
        let request = Array(
            #"{"app_id":"A","headings":{"en":"Hey"},"contents":{"en":"Hello world!","fr":"Bonjour"},"included_segments":["Test"],"ios_attachments":{"logo":"https://cdn.example.com/logo?s=200"}}"#
                .utf8)
        let push = try Composer.compose(request, options: ComposeOptions(dialect: .onesignal)).get()
        #expect(
            push.payload.text
                == #"{"aps":{"alert":{"title":"Hey","body":"Hello world!"},"mutable-content":1},"custom":{"i":"00000000-0000-0000-0000-000000000000"},"att":{"logo":"https://cdn.example.com/logo?s=200"}}"#
        )
        #expect(
            push.rules == [
                "onesignal-attachments", "onesignal-mutable-content", "onesignal-alert", "onesignal-notification-id",
            ])
        #expect(push.headers.pushType == .alert)
    }

    /// The request's `data` is the SDK's additional data, `custom.a`, beside the notification id.
    @Test func oneSignalDataBecomesCustomA() throws {
        let request = Array(#"{"contents":{"en":"a"},"data":{"order":42,"deep":{"x":[1]}}}"#.utf8)
        let push = try Composer.compose(request, options: ComposeOptions(dialect: .onesignal)).get()
        #expect(
            push.payload.text
                == #"{"aps":{"alert":{"body":"a"}},"custom":{"i":"00000000-0000-0000-0000-000000000000","a":{"order":42,"deep":{"x":[1]}}}}"#
        )
        #expect(push.rules.contains("onesignal-data"))
        let wrong = Composer.compose(
            Array(#"{"contents":{"en":"a"},"data":[1]}"#.utf8), options: ComposeOptions(dialect: .onesignal))
        guard case .failure(let refusal) = wrong else {
            Issue.record("data as an array composed")
            return
        }
        #expect(refusal.code == .invalidField && refusal.status == nil)
    }

    /// `compose --sdk X` writes what X's server delivers, so `process --sdk auto` (DialectDetection)
    /// reads it as X: Braze's `ab`, OneSignal's `custom.i`, Airship's `com.urbanairship.metadata`, with
    /// or without an attachment.
    @Test(arguments: [
        (ComposeDialect.braze, #"{"broadcast":true,"messages":{"apple_push":{"alert":"a"}}}"#),
        (.braze, #"{"alert":"a","asset_url":"https://x.example/a.jpg","asset_file_type":"jpg"}"#),
        (.braze, #"{"content-available":true}"#),
        (.onesignal, #"{"contents":{"en":"a"}}"#),
        (.onesignal, #"{"contents":{"en":"a"},"ios_attachments":{"id":"https://x.example/a.jpg"}}"#),
        (.onesignal, #"{"mutable_content":true}"#),
        (.airship, #"{"notification":{"alert":"a"}}"#),
        (
            .airship,
            #"{"notification":{"ios":{"mutable_content":true,"media_attachment":{"url":"https://x.example/a.jpg"}}}}"#
        ),
    ])
    func composedPayloadsAreDetectedAsTheirSDK(dialect: ComposeDialect, request: String) throws {
        let push = try Composer.compose(Array(request.utf8), options: ComposeOptions(dialect: dialect)).get()
        let sdk = try #require(Dialect.named(dialect.rawValue))
        #expect(DialectDetection.detect(push.payload).name == sdk.name, "\(push.payload.text)")
        // The bytes as written, parsed back: what `process --sdk auto` reads from stdin.
        #expect(DialectDetection.detect(try JSONValue.parse(push.bytes)).name == sdk.name)
    }

    @Test(arguments: [
        #"{"contents":{"en":"a"},"ios_attachments":["https://x/a.jpg"]}"#,
        #"{"contents":{"en":"a"},"ios_attachments":{"a":1}}"#,
        #"{"contents":"a"}"#, #"{"app_id":"A"}"#,
    ])
    func oneSignalRefusesMalformedBodies(text: String) {
        guard
            case .failure(let refusal) = Composer.compose(
                Array(text.utf8), options: ComposeOptions(dialect: .onesignal))
        else {
            Issue.record("\(text) composed")
            return
        }
        #expect(refusal.status == nil)
    }

    @Test func airshipMediaAttachmentIsCopiedUnderTheSDKsKey() throws {
        let request = Array(
            #"{"audience":{"ios_channel":"c"},"device_types":["ios"],"notification":{"ios":{"alert":"alert","title":"title","subtitle":"sub","mutable_content":true,"media_attachment":{"url":"https://m.example/a.gif","options":{"time":10},"content":{"body":"b"}}}}}"#
                .utf8)
        let push = try Composer.compose(request, options: ComposeOptions(dialect: .airship)).get()
        #expect(
            push.payload.text
                == #"{"aps":{"alert":{"title":"title","subtitle":"sub","body":"alert"},"mutable-content":1},"com.urbanairship.media_attachment":{"url":"https://m.example/a.gif","options":{"time":10},"content":{"body":"b"}},"_":"00000000-0000-0000-0000-000000000000","com.urbanairship.metadata":"richpush-stand-in"}"#
        )
        #expect(push.warnings.isEmpty)
        #expect(push.rules.suffix(2) == ["airship-push-id", "airship-metadata"])
    }

    @Test func airshipWithoutMutableContentWarnsAndLeavesItOut() throws {
        let request = Array(
            #"{"device_types":"all","notification":{"alert":"a","ios":{"media_attachment":{"url":["https://m.example/a.jpg"]}}}}"#
                .utf8)
        let push = try Composer.compose(request, options: ComposeOptions(dialect: .airship)).get()
        #expect(push.payload["aps"]?["mutable-content"] == nil)
        #expect(push.warnings.map(\.code) == ["airship-mutable-content-missing"])
        let android = Array(#"{"device_types":["android"],"notification":{"alert":"a"}}"#.utf8)
        guard case .failure(let refusal) = Composer.compose(android, options: ComposeOptions(dialect: .airship)) else {
            Issue.record("an Android-only push composed")
            return
        }
        #expect(refusal.code == .notARequest)
    }
}
