import Foundation

/// Braze's `apple_push` object to the payload and headers Braze delivers (the mapping of Braze's REST documentation, docs/guide.md, "What to double-check";
/// the rules are ``ComposeRule/braze``).
///
/// The refusals and the button rules name their source as `page@commit`, pages of the braze-docs repository:
/// - `apple_object`: https://github.com/braze-inc/braze-docs/blob/5c1e9e0/_docs/_api/objects_filters/messaging/apple_object.md
/// - `post_send_messages`: https://github.com/braze-inc/braze-docs/blob/d042d5b/_docs/_api/endpoints/messaging/send_messages/post_send_messages.md
///   (and @042c649, an older version)
/// - `parameters`: https://github.com/braze-inc/braze-docs/blob/a273b40/_docs/_api/parameters.md
/// - `errors`: https://github.com/braze-inc/braze-docs/blob/043179b/_docs/_api/errors.md
enum BrazeComposer {
    /// Braze's largest `/messages/send` payload for iOS, in bytes (400 Apple Push Length Exceeded above it).
    static let apiLimit = 1912
    /// Braze's largest payload for dashboard campaigns and Canvas steps, in bytes.
    static let dashboardLimit = 3807
    /// More external ids and aliases than this in one request are refused.
    static let maximumRecipients = 50
    /// The recipients list of a `/messages/send` body: with `broadcast: true` beside one, Braze answers
    /// with an error (`post_send_messages@d042d5b`, the `broadcast` row; `parameters@a273b40`, Broadcast).
    static let recipientLists = ["external_user_ids", "user_aliases"]
    /// The members of `messages`, one per channel (`post_send_messages@d042d5b`; the two Windows
    /// channels from the older `@042c649`). A `messages` with none of them has no message to send.
    static let messageChannels: Set<String> = [
        "android_push", "apple_push", "content_card", "email", "kindle_push", "web_push", "webhook", "whats_app",
        "sms", "windows_phone8_push", "windows_universal_push",
    ]
    /// The top-level fields of a `/messages/send` body besides `messages` (`post_send_messages@d042d5b`):
    /// JSON holding one of them is a whole request, never an `apple_push` object alone.
    static let requestFields: Set<String> = [
        "broadcast", "external_user_ids", "user_aliases", "segment_id", "audience", "campaign_id", "send_id",
        "override_frequency_capping", "recipient_subscription_state",
    ]

    static let assetFileTypes = ["aif", "gif", "jpg", "m4a", "mp3", "mp4", "png", "wav"]
    static let interruptionLevels = ["passive", "active", "time-sensitive", "critical"]
    static let buttonActions = ["OPEN_APP", "URI", "DEEP_LINK", "CLOSE"]
    /// Braze's default button categories and their action ids.
    static let defaultCategories: [(category: String, actions: [String])] = [
        ("ab_cat_accept_decline", ["ab_pb_accept", "ab_pb_decline"]),
        ("ab_cat_yes_no", ["ab_pb_yes", "ab_pb_no"]),
        ("ab_cat_confirm_cancel", ["ab_pb_confirm", "ab_pb_cancel"]),
        ("ab_cat_more", ["ab_pb_more"]),
    ]
    static let knownFields: Set<String> = [
        "badge", "alert", "sound", "extra", "content-available", "interruption_level", "relevance_score", "expiry",
        "custom_uri", "use_webview", "message_variation_id", "notification_group_thread_id", "asset_url",
        "asset_file_type", "collapse_id", "mutable_content", "send_to_most_recent_device_only", "category",
        "buttons", "apns_priority",
    ]
    /// Alert fields as the request spells them, and as APNs does.
    static let alertFields: [(request: String, apns: String)] = [
        ("title", "title"), ("body", "body"), ("title_loc_key", "title-loc-key"), ("title_loc_args", "title-loc-args"),
        ("action_loc_key", "action-loc-key"), ("loc_key", "loc-key"), ("loc_args", "loc-args"),
    ]

    /// Where the `apple_push` object was found.
    private enum Shape {
        /// A whole `/messages/send` body: its audience and campaign are checked.
        case request
        /// `{"apple_push": {...}}` or the object alone.
        case fragment
    }

    /// The request's `apple_push` with its Liquid parsed, once for all its users; nil when the
    /// request has no `apple_push` object (it is refused before anything is rendered).
    static func document(of root: JSONValue) -> Liquid.Document? {
        guard let (applePush, _) = try? locate(root), case .object = applePush else { return nil }
        return Liquid.Document(applePush, path: "apple_push")
    }

    /// The request composed for `user`; nil when `checksCancellation` is set and the task was
    /// cancelled while its Liquid rendered. `renderingLimit` replaces ``renderingLimit(_:)`` (the fuzz
    /// target renders without one, to check that the limit never changes a push that composes).
    static func compose(
        _ root: JSONValue, document: Liquid.Document?, options: ComposeOptions, user: JSONValue?,
        checksCancellation: Bool, renderingLimit limit: Int? = nil
    ) -> Result<ComposedPush, ComposeRefusal>? {
        do throws(ComposeRefusal) {
            return try build(
                root, document: document, options: options, user: user, checksCancellation: checksCancellation,
                limit: limit ?? renderingLimit(options)
            ).map { .success($0) }
        } catch {
            return .failure(error)
        }
    }

    private static func build(
        _ root: JSONValue, document: Liquid.Document?, options: ComposeOptions, user: JSONValue?,
        checksCancellation: Bool, limit: Int
    ) throws(ComposeRefusal) -> ComposedPush? {
        let (applePush, shape) = try locate(root)
        guard case .object = applePush else {
            throw .badRequest(
                .invalidField, "apple_push is \(applePush.typeName), not an object.",
                hint: "apple_push is an object: {\"alert\": \"Hi\"}.")
        }
        if shape == .request && !options.dashboard { try checkAudience(root, applePush: applePush) }
        var rules: [String] = []
        var warnings: [Warning] = []

        // Liquid first: every check below sees what this user gets.
        var campaign: [(key: String, value: JSONValue)] = []
        if case .string(let id)? = root["campaign_id"] { campaign.append(("api_id", .string(id))) }
        let context = user.map { Liquid.Context(user: $0, campaign: campaign) }
        var report = Liquid.Report()
        var renderer = Liquid.Renderer(context: context, checksCancellation: checksCancellation)
        let push: JSONValue
        do throws(Liquid.Interruption) {
            push = try render(
                document ?? Liquid.Document(applePush, path: "apple_push"), renderer: &renderer, limit: limit,
                report: &report)
        } catch {
            switch error {
            case .cancelled: return nil
            case .pastLimit(let field, let reached, _, let whole):
                throw renderingRefusal(field: field, reached: reached, payload: whole, options: options)
            }
        }
        if !report.fields.isEmpty { rules.append("liquid") }
        warnings += report.warnings(rendered: context != nil)

        guard case .object(let fields) = push else { throw .badRequest(.invalidField, "apple_push is not an object.") }
        for field in fields where !knownFields.contains(field.key) {
            let hint =
                field.key == "content_available"
                ? " Braze spells it content-available, with a hyphen."
                : field.key == "aps" || field.key == "ab"
                    ? " The payload's own keys are Braze's to write; put custom keys in extra." : ""
            warnings.append(
                Warning(
                    "unknown-field",
                    "apple_push.\(field.key) is not a field Braze documents, so richpush leaves it out of the "
                        + "payload.\(hint)"))
        }

        var aps: [(key: String, value: JSONValue)] = []
        // alert
        let contentAvailable = try bool(push, "content-available") ?? false
        if let alert = push["alert"] {
            aps.append(("alert", try composeAlert(alert, warnings: &warnings, rules: &rules)))
        } else if !contentAvailable {
            throw .badRequest(
                .missingAlert, "apple_push has no alert, and no content-available: true.",
                hint: "Give an alert (a string, or {\"title\", \"body\"}), or send a background push with "
                    + "content-available: true.")
        }
        if let badge = push["badge"] {
            guard case .number(let text) = badge, Int(text) != nil else {
                throw .badRequest(.invalidField, "apple_push.badge is \(badge.typeName) \(badge.text), not an integer.")
            }
            aps.append(("badge", badge))
            rules.append("badge")
        }
        if let sound = try string(push, "sound") {
            aps.append(("sound", .string(sound)))
            rules.append("sound")
        }
        if let thread = try string(push, "notification_group_thread_id") {
            aps.append(("thread-id", .string(thread)))
            rules.append("thread-id")
        }
        let category = try string(push, "category")
        let buttons = try composeButtons(push, category: category, warnings: &warnings)
        if category == nil, let buttons {
            // Braze's docs: action buttons need `category`; `buttons` only adds what they do
            // (`apple_object@5c1e9e0`). No category is chosen for them, so iOS shows none.
            let fix =
                defaultCategory(of: buttons.ids).map {
                    "Their action ids are those of Braze's default category \($0): give category: \"\($0)\"."
                } ?? "Give the category the app registers for them."
            warnings.append(
                Warning(
                    "buttons-without-category",
                    "apple_push has buttons but no category: Braze shows action buttons only for the category "
                        + "given (buttons only set what they do), so iOS shows none. " + fix))
        }
        if let category {
            aps.append(("category", .string(category)))
            rules.append("category")
        }
        if contentAvailable {
            aps.append(("content-available", .number("1")))
            rules.append("content-available")
        }
        let assetURL = try string(push, "asset_url")
        let assetType = try string(push, "asset_file_type")
        let mutable = try bool(push, "mutable_content")
        if assetURL != nil || mutable == true {
            aps.append(("mutable-content", .number("1")))
            rules.append("mutable-content")
            if assetURL != nil && mutable == false {
                warnings.append(
                    Warning(
                        "mutable-content-forced",
                        "apple_push.mutable_content is false, but Braze sets mutable-content to 1 for a rich "
                            + "notification whatever it says."))
            }
        }
        if let level = try string(push, "interruption_level") {
            guard interruptionLevels.contains(level) else {
                throw .badRequest(
                    .invalidField,
                    "apple_push.interruption_level is '\(level)', not one of \(interruptionLevels.joined(separator: ", "))."
                )
            }
            aps.append(("interruption-level", .string(level)))
            rules.append("interruption-level")
        }
        if let score = push["relevance_score"] {
            guard case .number(let text) = score, let number = Double(text), (0...1).contains(number) else {
                throw .badRequest(
                    .invalidField, "apple_push.relevance_score is \(score.text), not a number from 0.0 to 1.0.")
            }
            aps.append(("relevance-score", score))
            rules.append("relevance-score")
        }

        var ab: [(key: String, value: JSONValue)] = []
        if let assetURL {
            guard let assetType else {
                throw .badRequest(
                    .missingAssetFileType,
                    "apple_push has asset_url but no asset_file_type, which Braze requires with it.",
                    hint: "Add asset_file_type: one of \(assetFileTypes.joined(separator: ", ")).")
            }
            guard assetFileTypes.contains(assetType) else {
                let lower = assetType.lowercased()
                let guess =
                    assetFileTypes.contains(lower)
                    ? "Write it in lower case: '\(lower)'." : lower == "jpeg" ? "Write 'jpg'." : nil
                throw .badRequest(
                    .unsupportedAssetFileType,
                    "apple_push.asset_file_type is '\(assetType)', not one of Braze's types "
                        + "(\(assetFileTypes.joined(separator: ", "))).",
                    hint: guess ?? "Convert the asset to one of those types.")
            }
            ab.append(("att", .object([("url", .string(assetURL)), ("type", .string(assetType))])))
            rules.append("asset-url")
            // The URL as this user gets it (Liquid rendered): one that only iOS 17 and later can read.
            if let problem = AttachmentURL.legacyRefusal(of: assetURL), URL(string: assetURL) != nil {
                warnings.append(
                    Warning(
                        "url-needs-ios-17",
                        "apple_push.asset_url\(user == nil ? "" : " for this user") holds \(problem): URL(string:) "
                            + "reads it only on iOS 17 and later, in an extension linked against their SDK; on "
                            + "\(DeviceVersion.legacyPhones), it is nil and the plain notification shows. "
                            + "Percent-encode it in the template (or the attribute)."))
            }
        } else if assetType != nil {
            warnings.append(
                Warning(
                    "asset-type-without-url",
                    "apple_push.asset_file_type is given without asset_url, so there is no attachment."))
        }
        if let buttons {
            ab.append(("ab_cat", .object(buttons.members)))
            rules.append("buttons")
        }
        ab.append(("c", root["campaign_id"].flatMap { if case .string = $0 { $0 } else { nil } } ?? .null))
        rules.append("campaign-key")

        var payload: [(key: String, value: JSONValue)] = [("aps", .object(aps)), ("ab", .object(ab))]
        let customURI = try string(push, "custom_uri")
        let useWebview = try bool(push, "use_webview")
        if let customURI {
            payload.append(("ab_uri", .string(customURI)))
            rules.append("custom-uri")
        }
        if useWebview != nil || customURI != nil {
            payload.append(("ab_use_webview", .bool(useWebview ?? true)))
            rules.append("use-webview")
        }
        payload += try composeExtra(
            push, options: options, taken: payload.map(\.key), warnings: &warnings, rules: &rules)

        let headers = try composeHeaders(
            push, aps: aps, contentAvailable: contentAvailable, warnings: &warnings, rules: &rules)
        rules.append("key-order")
        let composed = ComposedPush(
            payload: .object(payload), headers: headers, warnings: warnings, liquidFields: report.fields, rules: rules)
        return try checkSize(composed, options: options, liquid: !report.fields.isEmpty && context == nil)
    }

    /// The most bytes Liquid may render into one payload, or into one field outside it: Braze's
    /// API limit, over which the payload is refused; for a dashboard message (a warning over 3,807
    /// bytes), APNs' own 4,096, over which no send delivers it.
    static func renderingLimit(_ options: ComposeOptions) -> Int {
        options.dashboard ? ExtensionPolicy.PushType.alert.maxPayloadBytes : apiLimit
    }

    /// Fields whose text Braze puts into the payload as it is (after Liquid): their texts share one
    /// budget. `asset_file_type` counts only beside `asset_url`; `alert`, `buttons` and `extra` are
    /// read member by member.
    static let payloadTextFields: Set<String> = [
        "sound", "notification_group_thread_id", "category", "asset_url", "interruption_level", "custom_uri",
    ]
    /// Fields whose rendered text nothing reads: Braze checks that they are there, or ignores them.
    static let unreadFields: Set<String> = ["message_variation_id", "send_to_most_recent_device_only"]
    /// The members of a button that go into the payload.
    static let buttonPayloadMembers: Set<String> = ["action_id", "action", "uri"]

    /// `apple_push` rendered for one user, against the payload's budget.
    ///
    /// Every text Braze copies into the payload is charged to one budget of `limit` bytes: they are
    /// all in the payload, at least as long as rendered, so past it the payload is over the limit
    /// whatever the rest holds. A text outside the payload that some check reads (a header,
    /// `badge`, `expiry`) has a budget of its own, the same size: no field Braze sends is longer
    /// than a whole payload. A text nothing reads (an unknown field, a repeated key but the last,
    /// a button's unknown member) is not rendered: its tags are only noted for the report.
    private static func render(
        _ document: Liquid.Document, renderer: inout Liquid.Renderer, limit: Int, report: inout Liquid.Report
    ) throws(Liquid.Interruption) -> JSONValue {
        var payload = Liquid.Budget(limit: limit, whole: true)
        guard case .object(let members) = document else {
            return try renderer.render(document, budget: &payload, report: &report)
        }
        let last = lastIndexes(members)
        // Extra keys Braze writes itself (custom_uri, use_webview): the extra's own are left out (ab and
        // aps are refused). A dashboard "$json:" text is charged as rendered, a few bytes more than the
        // compact JSON sent: that budget, APNs' 4,096 bytes, is already above the dashboard's 3,807.
        var taken: Set<String> = ["ab", "aps"]
        if last["custom_uri"] != nil { taken.formUnion(["ab_uri", "ab_use_webview"]) }
        if last["use_webview"] != nil { taken.insert("ab_use_webview") }
        var rendered: [(key: String, value: JSONValue)] = []
        rendered.reserveCapacity(members.count)
        for (index, member) in members.enumerated() {
            let key = member.key
            let value: JSONValue
            if last[key] != index || !knownFields.contains(key) || unreadFields.contains(key) {
                value = try renderer.note(member.value, report: &report)
            } else if key == "alert" || key == "extra", case .object(let inner) = member.value {
                // Alert fields Braze knows go into aps.alert; every extra key it does not take goes in.
                var parts: [(key: String, value: JSONValue)] = []
                for part in inner {
                    let kept =
                        key == "alert"
                        ? alertFields.contains { $0.request == part.key } : !taken.contains(part.key)
                    parts.append(
                        (
                            part.key,
                            kept
                                ? try renderer.render(part.value, budget: &payload, report: &report)
                                : try renderer.note(part.value, report: &report)
                        ))
                }
                value = .object(parts)
            } else if key == "buttons", case .array(let buttons) = member.value {
                var items: [JSONValue] = []
                for button in buttons {
                    guard case .object(let parts) = button else {
                        items.append(try renderer.note(button, report: &report))
                        continue
                    }
                    let lastPart = lastIndexes(parts)
                    var item: [(key: String, value: JSONValue)] = []
                    for (partIndex, part) in parts.enumerated() {
                        let kept = lastPart[part.key] == partIndex && buttonPayloadMembers.contains(part.key)
                        item.append(
                            (
                                part.key,
                                kept
                                    ? try renderer.render(part.value, budget: &payload, report: &report)
                                    : try renderer.note(part.value, report: &report)
                            ))
                    }
                    items.append(.object(item))
                }
                value = .array(items)
            } else if key == "alert" || payloadTextFields.contains(key)
                || (key == "asset_file_type" && last["asset_url"] != nil)
            {
                value = try renderer.render(member.value, budget: &payload, report: &report)
            } else if key == "extra" || key == "buttons" {
                // Not an object (an array): refused by its type, which is all the refusal reads.
                value = try renderer.note(member.value, report: &report)
            } else {
                var own = Liquid.Budget(limit: limit, whole: false)
                value = try renderer.render(member.value, budget: &own, report: &report)
            }
            rendered.append((key, value))
        }
        return .object(rendered)
    }

    /// Each key's last place among `members`: the member Braze reads when a key repeats.
    private static func lastIndexes(_ members: [(key: String, value: Liquid.Document)]) -> [String: Int] {
        var last: [String: Int] = [:]
        for (index, member) in members.enumerated() { last[member.key] = index }
        return last
    }

    /// Rendering stopped past the limit: the size check's refusal (for a dashboard message, which has
    /// no API answer, without Braze's status and words), naming the field where it stopped.
    private static func renderingRefusal(
        field: String, reached: Int, payload: Bool, options: ComposeOptions
    ) -> ComposeRefusal {
        let limit = options.dashboard ? "4,096" : "1,912"
        let detail =
            payload
            ? "the text its Liquid renders for this user passes \(limit) bytes in \(field), where rendering stopped "
                + "at \(reached) bytes"
            : "\(field) renders to more than \(limit) bytes for this user (rendering stopped at \(reached) bytes), "
                + "more than a whole push may hold"
        let hint = "Shorten the text around the tags, or check this user's attributes: each tag copies its whole value."
        guard !options.dashboard else {
            return ComposeRefusal(
                .applePushLengthExceeded, status: nil, brazeMessage: nil,
                detail: (payload ? "the payload is more than APNs' 4,096 bytes, so no send delivers it: " : "")
                    + detail
                    + (payload
                        ? " (Braze's limit for dashboard messages is 3,807 bytes)." : ", so no send delivers it."),
                hint: hint)
        }
        return ComposeRefusal(
            .applePushLengthExceeded, status: 400, brazeMessage: "Apple Push Length Exceeded",
            detail: (payload ? "JSON payload is more than 1,912 bytes: " : "") + detail + ".", hint: hint)
    }

    /// The `apple_push` object and the shape it came in; a refusal for JSON that is none of them.
    ///
    /// A body with a field of `/messages/send` (``requestFields``) or `messages` is a whole request.
    /// With no message object in it (no `messages`, or `messages` with none of ``messageChannels``)
    /// Braze answers 400 "No message to send" (`errors@043179b`); an
    /// `apple_push` beside the audience instead of inside `messages` is such a request. A `messages`
    /// holding other channels only is a request Braze takes, but it sends nothing to iOS.
    private static func locate(_ root: JSONValue) throws(ComposeRefusal) -> (JSONValue, Shape) {
        guard case .object(let fields) = root else {
            throw ComposeRefusal(
                .notARequest, status: 400, brazeMessage: "Bad Request",
                detail: "the request is \(root.typeName), not a JSON object.")
        }
        if root["aps"] != nil {
            throw ComposeRefusal(
                .notARequest, status: nil, brazeMessage: nil,
                detail: "this is already an APNs payload (it has 'aps'), not a Braze request.",
                hint: "Run it through 'richpush process' as it is.")
        }
        if let messages = root["messages"] {
            guard case .object(let channels) = messages else {
                throw .badRequest(
                    .invalidField, "messages is \(messages.typeName), not an object of message objects.",
                    hint: "Write messages as {\"apple_push\": {\"alert\": \"Hi\"}}.")
            }
            guard let applePush = messages["apple_push"] else {
                guard channels.contains(where: { messageChannels.contains($0.key) }) else {
                    throw noMessageToSend(
                        "the request's messages holds no message object (none of apple_push, android_push, "
                            + "email, ...).", applePushOutside: false)
                }
                throw ComposeRefusal(
                    .notARequest, status: nil, brazeMessage: nil,
                    detail: "the request's messages has no apple_push, so Braze sends nothing to iOS.",
                    hint: "Add messages.apple_push.")
            }
            return (applePush, .request)
        }
        if let field = fields.first(where: { requestFields.contains($0.key) }) {
            let outside = root["apple_push"] != nil
            throw noMessageToSend(
                "the request has \(field.key) but no messages"
                    + (outside ? "; its apple_push is beside the audience, not inside messages." : "."),
                applePushOutside: outside)
        }
        if let applePush = root["apple_push"] { return (applePush, .fragment) }
        return (root, .fragment)
    }

    /// Braze's 400 "No message to send" (`errors@043179b`).
    private static func noMessageToSend(_ detail: String, applePushOutside: Bool) -> ComposeRefusal {
        ComposeRefusal(
            .noMessageToSend, status: 400, brazeMessage: "No message to send", detail: detail,
            hint: applePushOutside
                ? "Move apple_push into messages: {\"messages\": {\"apple_push\": {...}}}."
                : "Add the iOS message as messages.apple_push: {\"alert\": \"Hi\"}.")
    }

    /// The audience and campaign rules of `/messages/send`: `broadcast: true` beside a recipients list
    /// (``recipientLists``) is Braze's documented error, which its error list does not name, so a 400
    /// "Bad Request" (`post_send_messages@d042d5b`, `parameters@a273b40`); then more than 50 ids and
    /// aliases, no audience without `broadcast: true` (400 No Recipients), and `campaign_id` without
    /// `message_variation_id` (`errors@043179b`).
    private static func checkAudience(_ root: JSONValue, applePush: JSONValue) throws(ComposeRefusal) {
        func count(_ key: String) throws(ComposeRefusal) -> Int {
            guard let value = root[key] else { return 0 }
            guard case .array(let items) = value else {
                throw .badRequest(.invalidField, "\(key) is \(value.typeName), not an array.")
            }
            return items.count
        }
        let recipients = try count("external_user_ids") + count("user_aliases")
        let broadcast = root["broadcast"] == .bool(true)
        if broadcast, let list = recipientLists.first(where: { root[$0] != nil }) {
            // Braze's docs forbid giving the list at all beside broadcast: true, so an empty one counts too.
            throw .badRequest(
                .broadcastWithRecipients,
                "the request sets broadcast: true and also gives \(list); Braze refuses a recipients list beside "
                    + "broadcast.",
                hint: "Send to the listed users with broadcast: false (or no broadcast), or drop \(list) to send "
                    + "to the whole segment or campaign audience.")
        }
        if recipients > maximumRecipients {
            throw ComposeRefusal(
                .tooManyRecipients, status: 400,
                brazeMessage: "The max number of external_ids and aliases per request was exceeded",
                detail:
                    "the request names \(recipients) external ids and aliases; Braze takes at most \(maximumRecipients).",
                hint: "Split the audience into requests of 50, or send to a segment_id.")
        }
        let audience = recipients > 0 || root["segment_id"] != nil || root["audience"] != nil
        if !audience && !broadcast {
            throw ComposeRefusal(
                .noRecipients, status: 400, brazeMessage: "No Recipients",
                detail: "the request has no external_user_ids, user_aliases, segment_id or audience, and broadcast is "
                    + "not true.",
                hint: "Name the recipients, or set broadcast: true to send to the whole segment or app.")
        }
        if root["campaign_id"] != nil && applePush["message_variation_id"] == nil {
            throw ComposeRefusal(
                .messageVariantUnspecified, status: 400, brazeMessage: "Message Variant Unspecified",
                detail: "the request gives campaign_id but apple_push has no message_variation_id.",
                hint:
                    "Add the variation's id (the campaign's API identifiers list it) as apple_push.message_variation_id."
            )
        }
    }

    private static func composeAlert(_ alert: JSONValue, warnings: inout [Warning], rules: inout [String])
        throws(ComposeRefusal) -> JSONValue
    {
        rules.append("alert")
        switch alert {
        case .string: return alert
        case .object(let members):
            var composed: [(key: String, value: JSONValue)] = []
            for member in members {
                if let field = alertFields.first(where: { $0.request == member.key }) {
                    if field.request.hasSuffix("_args") {
                        guard case .array(let items) = member.value,
                            items.allSatisfy({ if case .string = $0 { true } else { false } })
                        else {
                            throw .badRequest(
                                .invalidField,
                                "apple_push.alert.\(member.key) is \(member.value.typeName), not an array of strings.")
                        }
                    } else {
                        guard case .string = member.value else {
                            throw .badRequest(
                                .invalidField,
                                "apple_push.alert.\(member.key) is \(member.value.typeName), not a string.")
                        }
                    }
                    if field.apns != field.request { rules.append("alert-loc") }
                    composed.append((field.apns, member.value))
                } else if member.key == "sound" {
                    warnings.append(
                        Warning(
                            "alert-sound-dropped",
                            "apple_push.alert.sound is for Live Activities only; for a notification give "
                                + "apple_push.sound. richpush leaves it out."))
                } else {
                    warnings.append(
                        Warning(
                            "unknown-field",
                            "apple_push.alert.\(member.key) is not an alert field Braze documents, so richpush leaves it out."
                        ))
                }
            }
            return .object(composed)
        default:
            throw .badRequest(
                .invalidField, "apple_push.alert is \(alert.typeName), not a string or an object.",
                hint: "Write \"alert\": \"text\", or \"alert\": {\"title\": \"...\", \"body\": \"...\"}.")
        }
    }

    private struct Buttons {
        var ids: [String]
        var members: [(key: String, value: JSONValue)]
    }

    /// `buttons` as `ab.ab_cat`, checked as Braze documents them (`apple_object@5c1e9e0`): each needs an
    /// `action_id`; under an app-defined `category` (not one of ``defaultCategories``) `action` must be URI or
    /// DEEP_LINK and `uri` is required (refused, 400 Bad Request); under a default category, an id outside it
    /// or an action that button does not allow is a warning. Without a category they are still written (the
    /// size counts them), and the caller warns that iOS shows no buttons.
    private static func composeButtons(_ push: JSONValue, category: String?, warnings: inout [Warning])
        throws(ComposeRefusal) -> Buttons?
    {
        guard let value = push["buttons"] else { return nil }
        guard case .array(let items) = value else {
            throw .badRequest(.invalidField, "apple_push.buttons is \(value.typeName), not an array.")
        }
        let defaults = category.flatMap { name in defaultCategories.first { $0.category == name } }
        let appDefined = category != nil && defaults == nil
        var buttons = Buttons(ids: [], members: [])
        for (index, item) in items.enumerated() {
            let place = "apple_push.buttons[\(index)]"
            guard case .object = item else {
                throw .badRequest(.invalidField, "\(place) is \(item.typeName), not an object.")
            }
            guard case .string(let id)? = item["action_id"] else {
                throw .badRequest(.invalidField, "\(place) has no action_id string.")
            }
            var action: String?
            if let given = item["action"] {
                guard case .string(let text) = given, buttonActions.contains(text) else {
                    throw .badRequest(
                        .invalidField,
                        "\(place).action is \(given.text), not one of \(buttonActions.joined(separator: ", ")).")
                }
                action = text
            }
            var uri: String?
            if let given = item["uri"] {
                guard case .string(let text) = given else {
                    throw .badRequest(.invalidField, "\(place).uri is \(given.typeName), not a string.")
                }
                uri = text
            }
            var webview: Bool?
            if let given = item["use_webview"] {
                guard case .bool(let flag) = given else {
                    throw .badRequest(.invalidField, "\(place).use_webview is \(given.typeName), not a boolean.")
                }
                webview = flag
            }
            if appDefined {
                guard action == "URI" || action == "DEEP_LINK" else {
                    throw ComposeRefusal.badRequest(
                        .buttonRule,
                        "\(place).action is \(action ?? "missing"), but category '\(category ?? "")' is app-defined: "
                            + "Braze requires action URI or DEEP_LINK there.",
                        hint: "Use action URI or DEEP_LINK with a uri, or one of Braze's default categories.")
                }
                guard uri != nil else {
                    throw ComposeRefusal.badRequest(
                        .buttonRule,
                        "\(place) has no uri, which Braze requires for buttons of an app-defined category "
                            + "('\(category ?? "")').",
                        hint: "Add the uri the button opens.")
                }
            }
            if let defaults, !defaults.actions.contains(id) {
                warnings.append(
                    Warning(
                        "button-id-outside-category",
                        "\(place).action_id '\(id)' is not one of category \(defaults.category)'s "
                            + "(\(defaults.actions.joined(separator: ", "))): iOS shows that category's buttons only."))
            } else if defaults != nil, let action, !allowedActions(of: id).contains(action) {
                warnings.append(
                    Warning(
                        "button-action-not-allowed",
                        "\(place).action is \(action), but Braze allows "
                            + "\(allowedActions(of: id).joined(separator: ", ")) on its default button \(id)."))
            }
            var composed: [(key: String, value: JSONValue)] = []
            if let action { composed.append(("a_t", .string(action))) }
            if let uri { composed.append(("a_uri", .string(uri))) }
            if let webview { composed.append(("a_use_webview", .bool(webview))) }
            buttons.ids.append(id)
            buttons.members.append((id, .object(composed)))
        }
        return buttons
    }

    /// The actions Braze allows on one of its default buttons (`apple_object@5c1e9e0`): the buttons
    /// that decline, say no or cancel only close; the others open the app, a URI or a deep link.
    static func allowedActions(of id: String) -> [String] {
        ["ab_pb_decline", "ab_pb_no", "ab_pb_cancel"].contains(id) ? ["CLOSE"] : ["OPEN_APP", "URI", "DEEP_LINK"]
    }

    /// The default category whose action ids are exactly `ids` (in any order).
    static func defaultCategory(of ids: [String]) -> String? {
        defaultCategories.first { Set($0.actions) == Set(ids) && $0.actions.count == ids.count }?.category
    }

    private static func composeExtra(
        _ push: JSONValue, options: ComposeOptions, taken: [String], warnings: inout [Warning], rules: inout [String]
    ) throws(ComposeRefusal) -> [(key: String, value: JSONValue)] {
        guard let extra = push["extra"] else { return [] }
        guard case .object(let members) = extra else {
            throw ComposeRefusal(
                .invalidExtra, status: 400, brazeMessage: "Invalid Extra Push Payload",
                detail: "apple_push.extra is \(extra.typeName), not an object of key-value pairs.",
                hint: "Write extra as {\"key\": \"value\"}.")
        }
        if let reserved = members.first(where: { $0.key == "ab" || $0.key == "aps" }) {
            throw ComposeRefusal(
                .reservedExtraKey, status: 400, brazeMessage: "Invalid Extra Push Payload",
                detail: "apple_push.extra holds '\(reserved.key)', a key Braze reserves for the payload it builds.",
                hint: reserved.key == "aps"
                    ? "Give aps fields through apple_push itself (alert, badge, sound, category, ...)."
                    : "Rename the key; 'ab' is Braze's own object (attachment, buttons, campaign).")
        }
        rules.append("extra")
        var composed: [(key: String, value: JSONValue)] = []
        for member in members {
            if taken.contains(member.key) {
                warnings.append(
                    Warning(
                        "extra-key-collision",
                        "apple_push.extra.\(member.key) is a key Braze writes itself (from custom_uri or use_webview); "
                            + "richpush keeps Braze's and leaves the extra's out. Rename it."))
                continue
            }
            var value = member.value
            if options.dashboard, case .string(let text) = value, text.hasPrefix("$json:") {
                if let parsed = try? JSONValue.parse(Array(text.dropFirst(6).utf8)) {
                    value = parsed
                    rules.append("dashboard-json")
                } else {
                    warnings.append(
                        Warning(
                            "dashboard-json-invalid",
                            "apple_push.extra.\(member.key) starts with $json: but what follows is not JSON; Braze "
                                + "sends it as the string it is."))
                }
            }
            if value == .null {
                warnings.append(
                    Warning(
                        "extra-null-value",
                        "apple_push.extra.\(member.key) is null; Braze restricts key-value values to dictionary, "
                            + "array, string, number and Boolean."))
            }
            composed.append((member.key, value))
        }
        return composed
    }

    private static func composeHeaders(
        _ push: JSONValue, aps: [(key: String, value: JSONValue)], contentAvailable: Bool, warnings: inout [Warning],
        rules: inout [String]
    ) throws(ComposeRefusal) -> APNsHeaders {
        let visible = aps.contains { ["alert", "badge", "sound"].contains($0.key) }
        var headers = APNsHeaders(pushType: visible || !contentAvailable ? .alert : .background)
        rules.append("push-type")
        if let priority = push["apns_priority"] {
            guard case .number(let text) = priority, let number = Int(text), (1...10).contains(number) else {
                throw .badRequest(
                    .invalidField, "apple_push.apns_priority is \(priority.text), not an integer from 1 to 10.")
            }
            headers.priority = number
            rules.append("priority")
            if headers.pushType == .background && number == 10 {
                warnings.append(
                    Warning(
                        "background-priority",
                        "apns_priority is 10 for a background push; APNs requires 5 for background pushes and refuses "
                            + "10. Give 5 or leave it out."))
            } else if ![1, 5, 10].contains(number) {
                warnings.append(
                    Warning("priority-unusual", "apns_priority is \(number); APNs defines 1, 5 and 10 only."))
            }
        } else if headers.pushType == .background {
            headers.priority = 5
            rules.append("priority")
        }
        if let expiry = try string(push, "expiry") {
            guard let date = parseISO8601(expiry) else {
                throw .badRequest(
                    .invalidField,
                    "apple_push.expiry is '\(expiry.escapingControlCharacters)', not an ISO 8601 time that exists.",
                    hint: "Write it as 2026-12-01T18:00:00Z (a real date, a time before 24:00, an offset up to ±14:00)."
                )
            }
            let seconds = date.timeIntervalSince1970.rounded(.down)
            guard seconds >= 1 else {
                throw .badRequest(
                    .invalidField,
                    "apple_push.expiry is '\(expiry.escapingControlCharacters)', before 1970: apns-expiration counts "
                        + "seconds since 1970 and cannot be zero or negative.",
                    hint: "Give a time in the future, when the push stops being worth delivering.")
            }
            headers.expiration = Int64(seconds)
            rules.append("expiry")
        }
        if let collapse = try string(push, "collapse_id") {
            headers.collapseID = collapse
            rules.append("collapse-id")
            if collapse.utf8.count > 64 {
                warnings.append(
                    Warning(
                        "collapse-id-too-long",
                        "collapse_id is \(collapse.utf8.count) bytes; APNs refuses an apns-collapse-id over 64 bytes."))
            }
        }
        return headers
    }

    /// Braze's byte limits, counted over the compact payload (``ComposeRule`` `size-count`).
    private static func checkSize(_ push: ComposedPush, options: ComposeOptions, liquid: Bool) throws(ComposeRefusal)
        -> ComposedPush
    {
        var push = push
        let size = push.bytes.count
        if options.dashboard {
            push.rules.append("dashboard-size")
            push.rules = ComposeRule.all.map(\.id).filter(Set(push.rules).contains)
            if size > dashboardLimit {
                push.warnings.append(
                    Warning(
                        "dashboard-size",
                        "the payload is \(size) bytes; Braze's limit for dashboard campaigns and Canvas steps is "
                            + "\(dashboardLimit) bytes (it keeps the rest of APNs' 4,096 for itself), and over it the "
                            + "send fails. Shorten the copy, the URLs or the key-value pairs."))
            }
            return push
        }
        push.rules = ComposeRule.all.map(\.id).filter(Set(push.rules + ["size-count"]).contains)
        guard size > apiLimit else { return push }
        throw ComposeRefusal(
            .applePushLengthExceeded, status: 400, brazeMessage: "Apple Push Length Exceeded",
            detail: "JSON payload is more than 1,912 bytes: the composed payload is \(size) bytes as compact JSON"
                + (liquid ? ", with its Liquid as written" : "") + ".",
            hint: "Shorten the alert or the extra key-value pairs, or move data behind a URL the app fetches.")
    }

    /// ISO 8601 with or without fractional seconds, or a date alone (midnight UTC); nil for a date or
    /// time that does not exist (Foundation's formatter would roll 2026-02-30 over to March 2, and take
    /// an offset of +99:99), which ``isRealISO8601(_:)`` checks first.
    static func parseISO8601(_ text: String) -> Date? {
        guard isRealISO8601(text) else { return nil }
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withFullDate]
        return formatter.date(from: text)
    }

    /// Whether `text` is `YYYY-MM-DD`, or that with `THH:MM:SS`, optional fractional seconds and `Z` or
    /// `±HH:MM`, and every field is in range: a month of 1 to 12, a day that month has (leap years
    /// counted), an hour before 24, minutes and seconds before 60, an offset of at most 14 hours.
    static func isRealISO8601(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes.count >= 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), (1...12).contains(month)
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard (1...days).contains(day) else { return false }
        if bytes.count == 10 { return true }
        guard bytes.count >= 20, bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"),
            bytes[16] == UInt8(ascii: ":"), let hour = number(11..<13), let minute = number(14..<16),
            let second = number(17..<19), hour < 24, minute < 60, second < 60
        else { return false }
        var index = 19
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            let digits = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > digits else { return false }
        }
        guard index < bytes.count else { return false }
        if bytes[index] == UInt8(ascii: "Z") { return index + 1 == bytes.count }
        guard bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-"), index + 6 == bytes.count,
            bytes[index + 3] == UInt8(ascii: ":"), let hours = number(index + 1..<index + 3),
            let minutes = number(index + 4..<index + 6), minutes < 60, hours * 60 + minutes <= 14 * 60
        else { return false }
        return true
    }

    private static func string(_ push: JSONValue, _ key: String) throws(ComposeRefusal) -> String? {
        guard let value = push[key] else { return nil }
        guard case .string(let text) = value else {
            throw .badRequest(.invalidField, "apple_push.\(key) is \(value.typeName), not a string.")
        }
        return text
    }

    private static func bool(_ push: JSONValue, _ key: String) throws(ComposeRefusal) -> Bool? {
        guard let value = push[key] else { return nil }
        guard case .bool(let flag) = value else {
            throw .badRequest(.invalidField, "apple_push.\(key) is \(value.typeName) \(value.text), not true or false.")
        }
        return flag
    }
}
