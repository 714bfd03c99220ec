import RichPush
import Testing

/// Stages 1 to 3, without any download.
@Suite struct PayloadInspectorTests {
    func decided(_ text: String, pushType: ExtensionPolicy.PushType = .alert) -> Outcome? {
        if case .decided(let outcome, _) = PayloadInspector.inspect(Array(text.utf8), pushType: pushType) {
            return outcome
        }
        return nil
    }

    static let attachment = #""ab":{"att":{"url":"https://cdn.example.com/a.jpg","type":"jpg"}}"#

    @Test(arguments: [
        ("not json", ReasonCode.invalidJSON), ("[1,2]", .notAnObject), ("\"text\"", .notAnObject),
        (#"{"alert":"hi","mutable-content":1}"#, .apsMissing), (#"{"aps":[]}"#, .apsNotAnObject),
        (#"{"aps":"alert"}"#, .apsNotAnObject),
    ])
    func rejectsWhatAPNsWouldRefuse(text: String, reason: ReasonCode) {
        let outcome = decided(text)
        #expect(outcome?.verdict == .rejected)
        #expect(outcome?.reason == reason)
    }

    @Test func namesAByteOrderMarkAndNDJSONInsteadOfAParserError() throws {
        let payload = #"{"aps":{"alert":"Hi","mutable-content":1}}"#
        let bom = try #require(decided("\u{FEFF}" + payload))
        #expect(bom.reason == .invalidJSON)
        #expect(bom.message.contains("byte order mark (bytes EF BB BF)"), "\(bom.message)")
        let lines = try #require(decided(payload + "\n" + payload + "\n\n" + payload + "\n"))
        #expect(lines.reason == .invalidJSON)
        #expect(lines.message.contains("3 JSON documents, one per line (NDJSON)"), "\(lines.message)")
        #expect(lines.message.contains("richpush batch"))
        let broken = try #require(decided(payload + "\n{"))
        #expect(broken.message.hasPrefix("the payload is not valid JSON"), "\(broken.message)")
    }

    @Test func pointsAtKeysOutsideAps() {
        #expect(decided(#"{"alert":"hi","mutable-content":1}"#)?.hint?.contains("inside 'aps'") == true)
    }

    @Test func enforcesAPNsSizeLimitPerPushType() {
        let padding = String(repeating: "x", count: 4200)
        let text = #"{"aps":{"alert":"hi"},"pad":""# + padding + #""}"#
        #expect(decided(text)?.reason == .payloadTooLarge)
        #expect(decided(text, pushType: .voip)?.reason == .noAttachmentRequested)
    }

    @Test(arguments: [
        (#"{"aps":{"alert":"hi"},"# + attachment + "}", ReasonCode.mutableContentMissing, nil as String?),
        (#"{"aps":{"alert":"hi","mutable_content":1},"# + attachment + "}", .mutableContentMissing, "underscore"),
        (#"{"aps":{"alert":"hi"},"mutable-content":1,"# + attachment + "}", .mutableContentMissing, "top level"),
        (#"{"aps":{"alert":"hi","mutable-content":"1"},"# + attachment + "}", .mutableContentNotOne, "string"),
        (#"{"aps":{"alert":"hi","mutable-content":0},"# + attachment + "}", .mutableContentNotOne, nil),
        (#"{"aps":{"alert":"hi","mutable-content":true},"# + attachment + "}", .mutableContentNotOne, "boolean"),
        (#"{"aps":{"content-available":1,"mutable-content":1},"# + attachment + "}", .noAlert, nil),
        (#"{"aps":{"badge":1,"mutable-content":1},"# + attachment + "}", .noAlert, nil),
        (#"{"aps":{"alert":"","mutable-content":1},"# + attachment + "}", .noAlert, nil),
    ])
    func explainsWhyTheExtensionWouldNotRun(text: String, reason: ReasonCode, hint: String?) {
        let outcome = decided(text)
        #expect(outcome?.verdict == .notInvoked)
        #expect(outcome?.reason == reason)
        if let hint { #expect(outcome?.hint?.contains(hint) == true, "\(outcome?.hint ?? "no hint")") }
    }

    @Test func acceptsMutableContentOneWrittenAsADecimal() {
        let text = #"{"aps":{"alert":{"title":"t"},"mutable-content":1.0},"# + Self.attachment + "}"
        guard case .attachment = PayloadInspector.inspect(Array(text.utf8)) else {
            Issue.record("1.0 is the number 1")
            return
        }
    }

    @Test(arguments: [
        #"{"aps":{"alert":"hi","mutable-content":1}}"#, #"{"aps":{"alert":"hi","mutable-content":1},"ab":{}}"#,
        #"{"aps":{"alert":"hi","mutable-content":1},"ab":"x"}"#, #"{"aps":{"alert":"hi"}}"#,
    ])
    func asksForNoAttachmentWithoutAbAtt(text: String) {
        let outcome = decided(text)
        #expect(outcome?.verdict == .noAttachment)
        #expect(outcome?.reason == .noAttachmentRequested)
    }

    @Test(arguments: [
        (#""att":"https://x/a.jpg""#, ReasonCode.attachmentNotAnObject),
        (#""att":{"type":"jpg"}"#, .attachmentURLMissing),
        (#""att":{"url":42,"type":"jpg"}"#, .attachmentURLNotAString),
        (#""att":{"url":"https://cdn.example.com/a.jpg"}"#, .attachmentTypeMissing),
        (#""att":{"url":"https://cdn.example.com/a.jpg","type":["jpg"]}"#, .attachmentTypeNotAString),
        (#""att":{"url":"https://cdn.example.com/a.jpg","type":"webp"}"#, .unsupportedType),
        (#""att":{"url":"https://cdn.example.com/a.jpg","type":"../../x"}"#, .unsupportedType),
        (#""att":{"url":"https://cdn.example.com/a.jpg","type":""}"#, .unsupportedType),
    ])
    func failsAMalformedAttachmentRequest(att: String, reason: ReasonCode) {
        let outcome = decided(#"{"aps":{"alert":"hi","mutable-content":1},"ab":{"# + att + "}}")
        #expect(outcome?.verdict == .fallback)
        #expect(outcome?.reason == reason)
        #expect(outcome?.unError == reason.unErrorCode)
    }

    @Test func normalisesTheDeclaredTypeAndWarns() {
        let text = #"{"aps":{"alert":"hi","mutable-content":1},"ab":{"att":{"url":"https://c/a","type":".JPEG"}}}"#
        guard
            case .attachment(_, let declared, let format, _, let warnings) = PayloadInspector.inspect(Array(text.utf8))
        else {
            Issue.record("expected an attachment request")
            return
        }
        #expect(declared == ".JPEG")
        #expect(format.uti == "public.jpeg")
        #expect(warnings.map(\.code) == ["type-normalized", "type-outside-braze-api"])
    }
}
