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
                == #"{"aps":{"alert":{"title":"Hey","body":"Hello world!"},"mutable-content":1},"att":{"logo":"https://cdn.example.com/logo?s=200"}}"#
        )
        #expect(push.rules == ["onesignal-attachments", "onesignal-mutable-content", "onesignal-alert"])
        #expect(push.headers.pushType == .alert)
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
                == #"{"aps":{"alert":{"title":"title","subtitle":"sub","body":"alert"},"mutable-content":1},"com.urbanairship.media_attachment":{"url":"https://m.example/a.gif","options":{"time":10},"content":{"body":"b"}}}"#
        )
        #expect(push.warnings.isEmpty)
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
