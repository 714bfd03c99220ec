import Testing

@testable import RichPush

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
        guard case .media = PayloadInspector.inspect(Array(text.utf8)) else {
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
        guard case .media(let items, _, let warnings) = PayloadInspector.inspect(Array(text.utf8)),
            let declared = items.first?.declared, let format = AttachmentFormat.forExtension(declared)
        else {
            Issue.record("expected an attachment request")
            return
        }
        #expect(declared == ".JPEG")
        #expect(format.uti == "public.jpeg")
        #expect(warnings.map(\.code) == ["type-normalized", "type-outside-braze-api"])
    }

    static let fullAttachment = #"{"aps":{"alert":"hi","mutable-content":1},"# + attachment + "}"

    @Test(arguments: ExtensionPolicy.PushType.allCases.filter { $0 != .alert })
    func onlyAlertPushesRunTheExtension(pushType: ExtensionPolicy.PushType) throws {
        let outcome = try #require(decided(Self.fullAttachment, pushType: pushType))
        #expect(outcome.verdict == .notInvoked)
        #expect(outcome.reason == .noAlert)
        #expect(outcome.message.contains("\(pushType.rawValue) push"), "\(outcome.message)")
        #expect(outcome.hint?.contains("apns-push-type alert") == true)
    }

    @Test func anAlertPushWithTheSamePayloadRunsIt() {
        guard case .media = PayloadInspector.inspect(Array(Self.fullAttachment.utf8), pushType: .alert) else {
            Issue.record("an alert push with mutable-content 1 and ab.att asks for the attachment")
            return
        }
    }

    /// A payload of `bodyBytes` of text, pretty-printed with `indent` spaces per member.
    static func prettyPayload(bodyBytes: Int, indent: Int) -> String {
        let pad = String(repeating: " ", count: indent)
        let members = (0..<40).map { "\n" + pad + #""k\#($0)": "\#(String(repeating: "v", count: bodyBytes / 40))""# }
        return "{\n" + pad + #""aps": {"alert": "hi", "mutable-content": 1},"# + "\n" + pad
            + #""ab": {"att": {"url": "https://cdn.example.com/a.jpg", "type": "jpg"}},"#
            + members.joined(separator: ",") + "\n}\n"
    }

    @Test func countsTheCompactSizeOfAPrettyPrintedPayload() throws {
        let text = Self.prettyPayload(bodyBytes: 3400, indent: 20)
        let bytes = Array(text.utf8)
        let compact = try JSONValue.parse(bytes).utf8.count
        #expect(bytes.count > 4096 && compact <= 4096, "\(bytes.count) as written, \(compact) compact")
        #expect(PayloadInspector.compactSize(bytes) == compact)
        // Whitespace inside strings counts; escaped quotes do not end a string.
        let tricky = Array(#"{ "a b" : "x \" y" , "c":[ 1 , 2 ] }"#.utf8)
        #expect(PayloadInspector.compactSize(tricky) == #"{"a b":"x \" y","c":[1,2]}"#.utf8.count)
        guard case .media(_, _, let warnings) = PayloadInspector.inspect(bytes) else {
            Issue.record("a payload whose compact JSON fits is not rejected")
            return
        }
        let warning = try #require(warnings.first { $0.code == "payload-whitespace-over-limit" })
        #expect(warning.message.contains("\(compact) as compact JSON"), "\(warning.message)")
        #expect(warning.message.contains("Braze sends compact JSON"))
    }

    @Test func rejectsAPayloadTooLargeEvenCompactAndGivesBothSizes() throws {
        let text = Self.prettyPayload(bodyBytes: 4400, indent: 8)
        let compact = PayloadInspector.compactSize(Array(text.utf8))
        let outcome = try #require(decided(text))
        #expect(outcome.reason == .payloadTooLarge)
        #expect(outcome.message.contains("(\(compact) as compact JSON"), "\(outcome.message)")
    }

    @Test(arguments: [
        (
            #"{"aps":{"alert":"hi","mutable-content":1,"mutable-content":0},"# + attachment + "}",
            "'aps.mutable-content' appears 2 times", "the app sees 0", ReasonCode.mutableContentNotOne
        ),
        (
            #"{"aps":{"alert":"hi","mutable-content":0,"mutable-content":1},"# + attachment + "}",
            "'aps.mutable-content' appears 2 times", "the app sees 1", .ok
        ),
        (
            #"{"aps":{"alert":"hi","mutable-content":1},"ab":{"att":{"url":"https://c/a.jpg","type":"gif","type":"jpg"}}}"#,
            "'ab.att.type' appears 2 times", #"the app sees "jpg""#, .ok
        ),
        (
            #"{"aps":{"alert":"hi"},"x":[{"k":1,"k":{"a":2}}]}"#, "'x[0].k' appears 2 times", #"the app sees {"a":2}"#,
            .noAttachmentRequested
        ),
    ])
    func warnsOfDuplicateKeysWithTheValueTheDeviceSees(
        text: String, names: String, sees: String, reason: ReasonCode
    ) throws {
        let warnings: [Warning]
        switch PayloadInspector.inspect(Array(text.utf8)) {
        case .decided(let outcome, _):
            #expect(outcome.reason == reason)
            warnings = outcome.warnings
        case .media(let items, _, let more):
            #expect(reason == .ok)
            #expect(items.first?.declared == "jpg")
            warnings = more
        }
        let warning = try #require(warnings.first { $0.code == "duplicate-key" })
        #expect(warning.message.contains(names), "\(warning.message)")
        #expect(warning.message.contains(sees), "\(warning.message)")
    }

    @Test func duplicateKeyWarningsAreBounded() {
        let members = (0..<50).map { #""k\#($0)":1,"k\#($0)":2"# }.joined(separator: ",")
        let root = JSONValue.object([])
        #expect(PayloadInspector.duplicateKeyWarnings(root).isEmpty)
        guard
            case .decided(let outcome, _) = PayloadInspector.inspect(
                Array(#"{"aps":{"alert":"hi"},"#.utf8) + Array(members.utf8) + Array("}".utf8))
        else {
            Issue.record("no attachment is asked for")
            return
        }
        #expect(
            outcome.warnings.filter { $0.code == "duplicate-key" }.count == PayloadInspector.maxDuplicateKeyWarnings)
    }
}
