import Testing

@testable import RichPush

/// The mapping from Braze's `apple_push` to the delivered payload and headers, rule by rule, and
/// Braze's refusals with their status and words.
@Suite struct ComposerTests {
    /// `apple_push` fields (as JSON members) in a broadcast `/messages/send` body.
    static func request(_ applePush: String, top: String = #""broadcast":true"#) -> [UInt8] {
        Array(#"{\#(top),"messages":{"apple_push":{\#(applePush)}}}"#.utf8)
    }

    func composed(_ applePush: String, top: String = #""broadcast":true"#, options: ComposeOptions = ComposeOptions())
        throws -> ComposedPush
    {
        try Composer.compose(Self.request(applePush, top: top), options: options).get()
    }

    func refusal(_ bytes: [UInt8], options: ComposeOptions = ComposeOptions()) -> ComposeRefusal? {
        if case .failure(let refusal) = Composer.compose(bytes, options: options) { return refusal }
        return nil
    }

    /// One row per rule: the `apple_push` members, the compact payload, the headers, and the rule used.
    @Test(arguments: [
        (#""alert":"Hi""#, #"{"aps":{"alert":"Hi"},"ab":{"c":null}}"#, "apns-push-type: alert", "alert"),
        (
            #""alert":{"title":"T","body":"B"}"#, #"{"aps":{"alert":{"title":"T","body":"B"}},"ab":{"c":null}}"#,
            "apns-push-type: alert", "alert"
        ),
        (
            #""alert":{"loc_key":"K","loc_args":["a"],"title_loc_key":"TK","title_loc_args":[],"action_loc_key":"A"}"#,
            #"{"aps":{"alert":{"loc-key":"K","loc-args":["a"],"title-loc-key":"TK","title-loc-args":[],"action-loc-key":"A"}},"ab":{"c":null}}"#,
            "apns-push-type: alert", "alert-loc"
        ),
        (
            #""alert":"Hi","asset_url":"https://cdn.example.com/a.jpg","asset_file_type":"jpg""#,
            #"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/a.jpg","type":"jpg"},"c":null}}"#,
            "apns-push-type: alert", "asset-url"
        ),
        (
            #""alert":"Hi","asset_url":"https://x.example/a.mp4","asset_file_type":"mp4","mutable_content":false"#,
            #"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"https://x.example/a.mp4","type":"mp4"},"c":null}}"#,
            "apns-push-type: alert", "mutable-content"
        ),
        (
            #""alert":"Hi","mutable_content":true"#, #"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"c":null}}"#,
            "apns-push-type: alert", "mutable-content"
        ),
        (
            #""alert":"Hi","extra":{"deep":{"n":1.10},"k":"v"}"#,
            #"{"aps":{"alert":"Hi"},"ab":{"c":null},"deep":{"n":1.10},"k":"v"}"#, "apns-push-type: alert", "extra"
        ),
        (
            #""alert":"Hi","sound":"default","badge":3"#,
            #"{"aps":{"alert":"Hi","badge":3,"sound":"default"},"ab":{"c":null}}"#,
            "apns-push-type: alert", "sound"
        ),
        (
            #""alert":"Hi","notification_group_thread_id":"t1","category":"news""#,
            #"{"aps":{"alert":"Hi","thread-id":"t1","category":"news"},"ab":{"c":null}}"#, "apns-push-type: alert",
            "thread-id"
        ),
        (
            #""alert":"Hi","interruption_level":"time-sensitive","relevance_score":0.75"#,
            #"{"aps":{"alert":"Hi","interruption-level":"time-sensitive","relevance-score":0.75},"ab":{"c":null}}"#,
            "apns-push-type: alert", "relevance-score"
        ),
        (
            #""content-available":true"#, #"{"aps":{"content-available":1},"ab":{"c":null}}"#,
            "apns-push-type: background, apns-priority: 5", "content-available"
        ),
        (
            #""alert":"Hi","custom_uri":"myapp://home""#,
            #"{"aps":{"alert":"Hi"},"ab":{"c":null},"ab_uri":"myapp://home","ab_use_webview":true}"#,
            "apns-push-type: alert", "custom-uri"
        ),
        (
            #""alert":"Hi","custom_uri":"https://x.example","use_webview":false"#,
            #"{"aps":{"alert":"Hi"},"ab":{"c":null},"ab_uri":"https://x.example","ab_use_webview":false}"#,
            "apns-push-type: alert", "use-webview"
        ),
        (
            #""alert":"Hi","category":"ab_cat_yes_no","buttons":[{"action_id":"ab_pb_yes","action":"OPEN_APP"},{"action_id":"ab_pb_no","action":"CLOSE"}]"#,
            #"{"aps":{"alert":"Hi","category":"ab_cat_yes_no"},"ab":{"ab_cat":{"ab_pb_yes":{"a_t":"OPEN_APP"},"ab_pb_no":{"a_t":"CLOSE"}},"c":null}}"#,
            "apns-push-type: alert", "buttons"
        ),
        (
            #""alert":"Hi","category":"app_cat","buttons":[{"action_id":"open","action":"DEEP_LINK","uri":"app://x","use_webview":false}]"#,
            #"{"aps":{"alert":"Hi","category":"app_cat"},"ab":{"ab_cat":{"open":{"a_t":"DEEP_LINK","a_uri":"app://x","a_use_webview":false}},"c":null}}"#,
            "apns-push-type: alert", "buttons"
        ),
        (
            #""alert":"Hi","collapse_id":"score","apns_priority":5,"expiry":"2026-12-01T18:00:00Z""#,
            #"{"aps":{"alert":"Hi"},"ab":{"c":null}}"#,
            "apns-push-type: alert, apns-priority: 5, apns-expiration: 1796148000, apns-collapse-id: score", "expiry"
        ),
    ])
    func composesEachRule(applePush: String, payload: String, headers: String, rule: String) throws {
        let push = try composed(applePush)
        #expect(push.payload.text == payload)
        #expect(push.bytes == Array(payload.utf8))
        #expect(push.headers.fields.map { "\($0.name): \($0.value)" }.joined(separator: ", ") == headers)
        #expect(push.rules.contains(rule), "\(push.rules)")
        #expect(ComposeRule.named(rule) != nil)
    }

    /// The expiry forms that exist: a leap day alone, fractional seconds, offsets east and west.
    @Test(arguments: [
        ("2024-02-29", 1_709_164_800), ("2026-12-01T18:00:00.5+05:30", 1_796_128_200),
        ("2026-12-01T18:00:00-14:00", 1_796_198_400), ("2026-12-01T23:59:59Z", 1_796_169_599),
    ])
    func readsEveryExpiryThatExists(expiry: String, seconds: Int) throws {
        let push = try composed(#""alert":"Hi","expiry":"\#(expiry)""#)
        #expect(push.headers.expiration == Int64(seconds))
    }

    @Test func theCampaignIDGoesToAbC() throws {
        let push = try composed(
            #""alert":"Hi","message_variation_id":"iosPush-1""#, top: #""broadcast":true,"campaign_id":"camp-1""#)
        #expect(push.payload.text == #"{"aps":{"alert":"Hi"},"ab":{"c":"camp-1"}}"#)
    }

    @Test func readsAnApplePushObjectAloneOrWrapped() throws {
        let alone = try Composer.compose(Array(#"{"alert":"Hi"}"#.utf8)).get()
        let wrapped = try Composer.compose(Array(#"{"apple_push":{"alert":"Hi"}}"#.utf8)).get()
        #expect(alone.payload == wrapped.payload)
        #expect(alone.payload.text == #"{"aps":{"alert":"Hi"},"ab":{"c":null}}"#)
    }

    /// Every refusal: its code, Braze's status and words.
    @Test(arguments: [
        (
            #"{"broadcast":true,"messages":{"apple_push":{"alert":"a","extra":[1]}}}"#, "invalid-extra-payload", 400,
            "Invalid Extra Push Payload"
        ),
        (
            #"{"broadcast":true,"messages":{"apple_push":{"alert":"a","extra":{"ab":{}}}}}"#, "reserved-extra-key", 400,
            "Invalid Extra Push Payload"
        ),
        (
            #"{"broadcast":true,"messages":{"apple_push":{"alert":"a","extra":{"aps":{}}}}}"#, "reserved-extra-key",
            400, "Invalid Extra Push Payload"
        ),
        (
            #"{"broadcast":true,"messages":{"apple_push":{"alert":"a","asset_url":"https://x/a.jpg"}}}"#,
            "missing-asset-file-type", 400, "Bad Request"
        ),
        (
            #"{"broadcast":true,"messages":{"apple_push":{"alert":"a","asset_url":"https://x/a","asset_file_type":"webp"}}}"#,
            "unsupported-asset-file-type", 400, "Bad Request"
        ),
        (
            #"{"broadcast":true,"messages":{"apple_push":{"alert":"a","category":"mine","buttons":[{"action_id":"x","action":"OPEN_APP"}]}}}"#,
            "button-rule", 400, "Bad Request"
        ),
        (
            #"{"broadcast":true,"messages":{"apple_push":{"alert":"a","category":"mine","buttons":[{"action_id":"x","action":"URI"}]}}}"#,
            "button-rule", 400, "Bad Request"
        ),
        (#"{"messages":{"apple_push":{"alert":"a"}}}"#, "no-recipients", 400, "No Recipients"),
        (
            #"{"broadcast":true,"external_user_ids":["a"],"messages":{"apple_push":{"alert":"a"}}}"#,
            "broadcast-with-recipients", 400, "Bad Request"
        ),
        (
            #"{"broadcast":true,"user_aliases":[{"alias_name":"a","alias_label":"l"}],"messages":{"apple_push":{"alert":"a"}}}"#,
            "broadcast-with-recipients", 400, "Bad Request"
        ),
        // Braze's docs forbid giving the list at all beside broadcast: an empty one is given too.
        (
            #"{"broadcast":true,"external_user_ids":[],"messages":{"apple_push":{"alert":"a"}}}"#,
            "broadcast-with-recipients", 400, "Bad Request"
        ),
        (#"{"broadcast":true}"#, "no-message-to-send", 400, "No message to send"),
        (#"{"external_user_ids":["a"],"messages":{}}"#, "no-message-to-send", 400, "No message to send"),
        (#"{"segment_id":"s","messages":{"apple":{"alert":"a"}}}"#, "no-message-to-send", 400, "No message to send"),
        (#"{"broadcast":true,"apple_push":{"alert":"a"}}"#, "no-message-to-send", 400, "No message to send"),
        (#"{"broadcast":true,"messages":[{"apple_push":{"alert":"a"}}]}"#, "invalid-field", 400, "Bad Request"),
        (
            #"{"broadcast":false,"external_user_ids":[],"messages":{"apple_push":{"alert":"a"}}}"#, "no-recipients",
            400, "No Recipients"
        ),
        (
            #"{"external_user_ids":["a"],"campaign_id":"c","messages":{"apple_push":{"alert":"a"}}}"#,
            "message-variant-unspecified", 400, "Message Variant Unspecified"
        ),
        (#"{"broadcast":true,"messages":{"apple_push":{"badge":1}}}"#, "missing-alert", 400, "Bad Request"),
        (
            #"{"broadcast":true,"messages":{"apple_push":{"alert":"a","badge":"1"}}}"#, "invalid-field", 400,
            "Bad Request"
        ),
        (
            #"{"broadcast":true,"messages":{"apple_push":{"alert":"a","relevance_score":2}}}"#, "invalid-field", 400,
            "Bad Request"
        ),
        (
            #"{"broadcast":true,"messages":{"apple_push":{"alert":"a","interruption_level":"loud"}}}"#, "invalid-field",
            400, "Bad Request"
        ),
        (
            #"{"broadcast":true,"messages":{"apple_push":{"alert":"a","apns_priority":11}}}"#, "invalid-field", 400,
            "Bad Request"
        ),
        (
            #"{"broadcast":true,"messages":{"apple_push":{"alert":"a","expiry":"tomorrow"}}}"#, "invalid-field", 400,
            "Bad Request"
        ),
        // Times that do not exist, which Foundation's formatter would roll over or take, and one before 1970.
        (
            #"{"broadcast":true,"messages":{"apple_push":{"alert":"a","expiry":"2026-02-30T18:00:00Z"}}}"#,
            "invalid-field", 400, "Bad Request"
        ),
        (
            #"{"broadcast":true,"messages":{"apple_push":{"alert":"a","expiry":"2026-12-01T18:00:00+99:99"}}}"#,
            "invalid-field", 400, "Bad Request"
        ),
        (
            #"{"broadcast":true,"messages":{"apple_push":{"alert":"a","expiry":"2026-12-01T24:00:00Z"}}}"#,
            "invalid-field", 400, "Bad Request"
        ),
        (
            #"{"broadcast":true,"messages":{"apple_push":{"alert":"a","expiry":"1969-12-31T00:00:00Z"}}}"#,
            "invalid-field", 400, "Bad Request"
        ),
        (#"{"broadcast":true,"messages":{"apple_push":"#, "invalid-json", 400, "Bad Request"),
    ])
    func refusesAsBrazeDoes(text: String, code: String, status: Int, message: String) throws {
        let refused = try #require(refusal(Array(text.utf8)))
        #expect(refused.code.rawValue == code, "\(refused.line)")
        #expect(refused.status == status)
        #expect(refused.brazeMessage == message)
        #expect(refused.hint != nil || code == "invalid-field", "\(refused.line)")
    }

    /// Braze's docs (braze-docs `apple_object@5c1e9e0`): action buttons need `category`, and `buttons`
    /// only sets what they do. Without it no category is made up from the buttons' ids: the payload has
    /// none, so iOS shows no buttons, and the warning names the default category those ids belong to.
    @Test func buttonsWithoutCategoryGetNoCategoryAndAWarning() throws {
        let buttons =
            #""buttons":[{"action_id":"ab_pb_yes","action":"OPEN_APP"},{"action_id":"ab_pb_no","action":"CLOSE"}]"#
        let bare = try composed(#""alert":"Hi",\#(buttons)"#)
        #expect(bare.payload["aps"]?["category"] == nil)
        #expect(bare.payload["ab"]?["ab_cat"]?["ab_pb_yes"]?["a_t"] == .string("OPEN_APP"))
        #expect(bare.warnings.map(\.code) == ["buttons-without-category"])
        #expect(bare.warnings.first?.message.contains(#"give category: "ab_cat_yes_no""#) == true)
        #expect(!bare.rules.contains("category"))
        let given = try composed(#""alert":"Hi","category":"ab_cat_yes_no",\#(buttons)"#)
        #expect(given.payload["aps"]?["category"] == .string("ab_cat_yes_no"))
        #expect(given.warnings.isEmpty)
        let own = try composed(#""alert":"Hi","buttons":[{"action_id":"rate","action":"URI","uri":"https://x"}]"#)
        #expect(own.payload["aps"]?["category"] == nil)
        #expect(own.warnings.first?.message.contains("the category the app registers") == true)
    }

    /// `broadcast: true` is for a whole segment or campaign audience; beside a recipients list Braze
    /// answers with an error (braze-docs `post_send_messages@d042d5b`, `parameters@a273b40`). With a
    /// segment or connected audience it composes, and a list without broadcast composes.
    @Test func broadcastComposesWithASegmentButNotWithARecipientsList() throws {
        let message = #""messages":{"apple_push":{"alert":"a"}}"#
        for top in [#""broadcast":true"#, #""broadcast":true,"segment_id":"s""#, #""broadcast":true,"audience":{}"#] {
            #expect(refusal(Array("{\(top),\(message)}".utf8)) == nil, "\(top)")
        }
        #expect(refusal(Array(#"{"broadcast":false,"external_user_ids":["a"],\#(message)}"#.utf8)) == nil)
        for list in [#""external_user_ids":["a"]"#, #""user_aliases":[{"alias_name":"a","alias_label":"l"}]"#] {
            let refused = try #require(
                refusal(Array(#"{"broadcast":true,\#(list),"segment_id":"s",\#(message)}"#.utf8)))
            #expect(refused.code == .broadcastWithRecipients)
            #expect(refused.status == 400 && refused.brazeMessage == "Bad Request")
        }
    }

    @Test func refusesMoreThanFiftyRecipientsCountingAliases() throws {
        func body(ids: Int, aliases: Int) -> [UInt8] {
            let idList = (0..<ids).map { "\"u\($0)\"" }.joined(separator: ",")
            let aliasList = (0..<aliases).map { #"{"alias_name":"a\#($0)","alias_label":"l"}"# }.joined(separator: ",")
            return Array(
                #"{"external_user_ids":[\#(idList)],"user_aliases":[\#(aliasList)],"messages":{"apple_push":{"alert":"a"}}}"#
                    .utf8)
        }
        #expect(refusal(body(ids: 40, aliases: 10)) == nil)
        let refused = try #require(refusal(body(ids: 40, aliases: 11)))
        #expect(refused.code == .tooManyRecipients)
        #expect(refused.brazeMessage == "The max number of external_ids and aliases per request was exceeded")
        #expect(refused.detail.contains("51"))
    }

    /// 1,912 bytes of compact payload pass, 1,913 are Braze's "Apple Push Length Exceeded"; the
    /// request's own whitespace does not count.
    @Test func refusesAPayloadOver1912BytesAsCompactJSON() throws {
        let frame = #"{"aps":{"alert":""},"ab":{"c":null}}"#.utf8.count
        let fits = String(repeating: "x", count: 1912 - frame)
        let spaced = Array(#"{ "broadcast" : true , "messages" : { "apple_push" : { "alert" : "\#(fits)" } } }"#.utf8)
        let push = try Composer.compose(spaced).get()
        #expect(push.bytes.count == 1912)
        let refused = try #require(refusal(Self.request(#""alert":"\#(fits)x""#)))
        #expect(refused.code == .applePushLengthExceeded)
        #expect(refused.status == 400)
        #expect(refused.brazeMessage == "Apple Push Length Exceeded")
        #expect(refused.detail.contains("1,913 bytes") || refused.detail.contains("1913 bytes"), "\(refused.detail)")
    }

    @Test func dashboardMessagesWarnOver3807BytesInsteadOfRefusing() throws {
        let long = String(repeating: "y", count: 3900)
        let push = try Composer.compose(
            Array(#"{"alert":"\#(long)"}"#.utf8), options: ComposeOptions(dashboard: true)
        ).get()
        #expect(push.warnings.map(\.code) == ["dashboard-size"])
        let short = try Composer.compose(
            Array(#"{"alert":"\#(String(long.prefix(2000)))"}"#.utf8), options: ComposeOptions(dashboard: true)
        ).get()
        #expect(short.warnings.isEmpty)
    }

    @Test func dashboardJSONValuesBecomeJSON() throws {
        let push = try Composer.compose(
            Array(#"{"alert":"a","extra":{"j":"$json:{\"n\":[1,2]}","s":"$json:not"}}"#.utf8),
            options: ComposeOptions(dashboard: true)
        ).get()
        #expect(push.payload.text == #"{"aps":{"alert":"a"},"ab":{"c":null},"j":{"n":[1,2]},"s":"$json:not"}"#)
        #expect(push.warnings.map(\.code) == ["dashboard-json-invalid"])
        let api = try Composer.compose(Array(#"{"alert":"a","extra":{"j":"$json:{}"}}"#.utf8)).get()
        #expect(api.payload["j"] == .string("$json:{}"))
    }

    @Test(arguments: [
        (#""alert":{"title":"a","sound":"x"}"#, "alert-sound-dropped"),
        (#""alert":"a","content_available":true"#, "unknown-field"),
        (#""alert":"a","asset_file_type":"jpg""#, "asset-type-without-url"),
        (#""alert":"a","buttons":[{"action_id":"go","action":"OPEN_APP"}]"#, "buttons-without-category"),
        (#""alert":"a","category":"ab_cat_yes_no","buttons":[{"action_id":"go"}]"#, "button-id-outside-category"),
        (
            #""alert":"a","category":"ab_cat_yes_no","buttons":[{"action_id":"ab_pb_no","action":"DEEP_LINK","uri":"x://"}]"#,
            "button-action-not-allowed"
        ),
        (
            #""alert":"a","category":"ab_cat_more","buttons":[{"action_id":"ab_pb_more","action":"CLOSE"}]"#,
            "button-action-not-allowed"
        ),
        (#""content-available":true,"apns_priority":10"#, "background-priority"),
        (#""alert":"a","collapse_id":"\#(String(repeating: "c", count: 65))""#, "collapse-id-too-long"),
        (#""alert":"a","custom_uri":"x://","extra":{"ab_uri":"y"}"#, "extra-key-collision"),
        (#""alert":"a","extra":{"n":null}"#, "extra-null-value"),
    ])
    func warns(applePush: String, code: String) throws {
        #expect(try composed(applePush).warnings.map(\.code) == [code])
    }

    @Test func refusesADeliveredPayloadAndARequestWithoutApplePush() throws {
        let delivered = try #require(refusal(Array(#"{"aps":{"alert":"a"}}"#.utf8)))
        #expect(delivered.code == .notARequest)
        #expect(delivered.status == nil)
        #expect(delivered.hint?.contains("richpush process") == true)
        let android = try #require(
            refusal(Array(#"{"broadcast":true,"messages":{"android_push":{"alert":"a"}}}"#.utf8)))
        #expect(android.code == .notARequest)
        #expect(android.status == nil, "Braze takes it and sends to Android: only iOS gets nothing")
    }

    /// An `apple_push` beside the audience is a request with no message, not a fragment: the hint says
    /// where it goes. Alone, or wrapped with nothing else, it is a fragment.
    @Test func anApplePushBesideTheAudienceIsNoMessage() throws {
        let refused = try #require(refusal(Array(#"{"external_user_ids":["a"],"apple_push":{"alert":"a"}}"#.utf8)))
        #expect(refused.code == .noMessageToSend)
        #expect(refused.detail.contains("external_user_ids"), "\(refused.detail)")
        #expect(refused.hint?.contains("Move apple_push into messages") == true)
        #expect(refusal(Array(#"{"apple_push":{"alert":"a"}}"#.utf8)) == nil)
    }

    @Test func everyInferredRuleIsInTheTableAndTheEnvelopeNamesThoseUsed() throws {
        let push = try composed(#""alert":"a","custom_uri":"x://y""#)
        let envelope = push.envelope()
        guard case .array(let inferred)? = envelope["inferred"] else {
            Issue.record("no inferred list")
            return
        }
        #expect(inferred.contains(.string("custom-uri")))
        #expect(!inferred.contains(.string("extra")))
        #expect(envelope["headers"] == .object([("apns-push-type", .string("alert"))]))
        #expect(Set(ComposeRule.all.map(\.id)).count == ComposeRule.all.count)
    }

    @Test func theSampleRequestsFromBrazesDocsCompose() throws {
        let appleObject = Array(
            #"{"broadcast":false,"external_user_ids":["PushTest12"],"campaign_id":"9c2f","messages":{"apple_push":{"alert":{"title":"Hello!","body":"Message here"},"message_variation_id":"iosPush-640"}}}"#
                .utf8)
        #expect(
            try Composer.compose(appleObject).get().payload.text
                == #"{"aps":{"alert":{"title":"Hello!","body":"Message here"}},"ab":{"c":"9c2f"}}"#)
    }
}
