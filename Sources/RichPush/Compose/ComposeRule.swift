/// One rule of a mapping from a send request to the delivered payload: what it reads, what it
/// writes, and whether the platform documents it or richpush infers it.
///
/// `compose --explain` prints these, so a user knows which parts of a composed payload to
/// double-check against a real send; each composed push names the rules it used.
package struct ComposeRule: Sendable, Equatable {
    /// A stable kebab-case name (`asset-url`, `custom-uri`).
    package var id: String
    package var dialect: ComposeDialect
    /// The request's field(s).
    package var from: String
    /// Where they go in the payload or its headers.
    package var to: String
    /// Whether the platform's documentation states the rule; otherwise it is inferred.
    package var documented: Bool
    /// Why, or the part to double-check.
    package var note: String

    init(_ id: String, _ dialect: ComposeDialect, _ from: String, _ to: String, documented: Bool, _ note: String) {
        self.id = id
        self.dialect = dialect
        self.from = from
        self.to = to
        self.documented = documented
        self.note = note
    }

    /// `documented` or `inferred`.
    package var status: String { documented ? "documented" : "inferred" }

    /// The rule as JSON.
    package var json: JSONValue {
        .object([
            ("id", .string(id)), ("sdk", .string(dialect.rawValue)), ("from", .string(from)), ("to", .string(to)),
            ("status", .string(status)), ("note", .string(note)),
        ])
    }

    /// Every rule, in the order `compose --explain` lists them (Braze's in the order of its `apple_push` object's documentation).
    package static let all: [ComposeRule] = braze + oneSignal + airship

    /// The rule named `id`.
    package static func named(_ id: String) -> ComposeRule? { all.first { $0.id == id } }

    static let braze: [ComposeRule] = [
        ComposeRule(
            "extra", .braze, "extra", "top-level keys, in the request's order", documented: true,
            "Braze's apple_push object: keys of extra become keys of the payload; 'ab' and 'aps' are refused."),
        ComposeRule(
            "asset-url", .braze, "asset_url, asset_file_type", "ab.att.url, ab.att.type", documented: true,
            "asset_file_type is required with asset_url, one of aif, gif, jpg, m4a, mp3, mp4, png, wav."),
        ComposeRule(
            "mutable-content", .braze, "asset_url (or mutable_content: true)", "aps.mutable-content: 1",
            documented: true,
            "Set to 1 for a rich notification whatever mutable_content says; mutable_content: true alone also sets it."),
        ComposeRule(
            "campaign-key", .braze, "campaign_id", "ab.c (null without a campaign)", documented: false,
            "Braze documents 'the key c', null for API sends without a campaign; its place inside ab and that it "
                + "holds campaign_id as written are inferred (Braze may send its own encoded id)."),
        ComposeRule(
            "alert", .braze, "alert (string, or title/body)", "aps.alert", documented: false,
            "A string stays a string; an object keeps title and body under the same names."),
        ComposeRule(
            "alert-loc", .braze, "alert.title_loc_key, title_loc_args, action_loc_key, loc_key, loc_args",
            "aps.alert.title-loc-key, title-loc-args, action-loc-key, loc-key, loc-args", documented: false,
            "Snake case to APNs' kebab case."),
        ComposeRule(
            "sound", .braze, "sound", "aps.sound", documented: false, "\"default\" is the system sound."),
        ComposeRule("badge", .braze, "badge", "aps.badge", documented: false, "An integer."),
        ComposeRule(
            "thread-id", .braze, "notification_group_thread_id", "aps.thread-id", documented: false,
            "Groups notifications in Notification Center."),
        ComposeRule(
            "category", .braze, "category", "aps.category", documented: false,
            "As written; action buttons show only with it (buttons without it: warning)."),
        ComposeRule(
            "content-available", .braze, "content-available: true", "aps.content-available: 1", documented: false,
            "false leaves the key out."),
        ComposeRule(
            "interruption-level", .braze, "interruption_level", "aps.interruption-level", documented: false,
            "passive, active, time-sensitive or critical."),
        ComposeRule(
            "relevance-score", .braze, "relevance_score", "aps.relevance-score", documented: false,
            "A number from 0 to 1, as written."),
        ComposeRule(
            "custom-uri", .braze, "custom_uri", "ab_uri", documented: false, "Inferred from the delivered key's name."),
        ComposeRule(
            "use-webview", .braze, "use_webview (default true)", "ab_use_webview", documented: false,
            "Written when given, or (true) when custom_uri is."),
        ComposeRule(
            "buttons", .braze, "buttons[{action_id, action, uri, use_webview}]",
            "ab.ab_cat{<action_id>{a_t, a_uri, a_use_webview}}", documented: false,
            "The delivered key names are Braze's legacy sample's; a_t holds the action as written. Written without "
                + "a category too, though iOS then shows no buttons."),
        ComposeRule(
            "push-type", .braze, "alert / content-available", "apns-push-type header", documented: false,
            "alert when the payload has an alert, badge or sound; background for content-available alone."),
        ComposeRule(
            "collapse-id", .braze, "collapse_id", "apns-collapse-id header", documented: false,
            "Braze does not document its headers."),
        ComposeRule(
            "expiry", .braze, "expiry (ISO 8601)", "apns-expiration header (seconds since 1970)", documented: false,
            "Braze does not document its headers."),
        ComposeRule(
            "priority", .braze, "apns_priority", "apns-priority header", documented: false,
            "Left out when not given (APNs then uses 10), except 5 for a background push, which APNs requires."),
        ComposeRule(
            "size-count", .braze, "the whole request", "1,912-byte limit (400 Apple Push Length Exceeded)",
            documented: false,
            "Braze says alert + extra + other optional parameters; richpush counts the compact JSON of the whole "
                + "composed payload, ab included, which is the stricter reading."),
        ComposeRule(
            "dashboard-size", .braze, "--dashboard", "3,807-byte limit (warning)", documented: true,
            "Braze reserves part of APNs' 4,096 bytes for dashboard campaigns and Canvas steps; over it the send fails."
        ),
        ComposeRule(
            "dashboard-json", .braze, "--dashboard: extra value \"$json:{...}\"", "the structured JSON",
            documented: true, "Braze sends such a key-value pair as JSON for API-triggered campaigns."),
        ComposeRule(
            "key-order", .braze, "every field", "aps keys in a fixed order, then ab, ab_uri, ab_use_webview, extras",
            documented: false, "APNs does not care about order; the bytes (and so the size) do not change."),
        ComposeRule(
            "liquid", .braze, "{{${attribute}}}, {{custom_attribute.${name}}}, {{campaign.${name}}}, | default",
            "rendered per --user", documented: true,
            "Braze renders Liquid per user before the size check; richpush renders these tags only and names the rest."),
    ]

    static let oneSignal: [ComposeRule] = [
        ComposeRule(
            "onesignal-attachments", .onesignal, "ios_attachments {id: url}", "att {id: url}", documented: false,
            "The SDK reads att (or os_data.att); which of the two OneSignal's server writes is inferred."),
        ComposeRule(
            "onesignal-mutable-content", .onesignal, "ios_attachments (or mutable_content: true)",
            "aps.mutable-content: 1", documented: false,
            "Without it iOS never runs the extension; that OneSignal sets it is inferred."),
        ComposeRule(
            "onesignal-alert", .onesignal, "headings.en, subtitle.en, contents.en", "aps.alert.title, subtitle, body",
            documented: false, "English only: richpush does not pick among the other languages."),
        ComposeRule(
            "onesignal-notification-id", .onesignal, "(the notification OneSignal creates)",
            "custom.i: 00000000-0000-0000-0000-000000000000", documented: false,
            "The server writes the notification's own UUID there (the SDK's receipts and sessions read it); "
                + "richpush writes a stand-in."),
        ComposeRule(
            "onesignal-data", .onesignal, "data {key: value}", "custom.a", documented: false,
            "The SDK's additionalData is custom.a in a payload without os_data."),
    ]

    static let airship: [ComposeRule] = [
        ComposeRule(
            "airship-media", .airship, "notification.ios.media_attachment {url, options, content}",
            "com.urbanairship.media_attachment {url, options, content}", documented: false,
            "The SDK's key and members (from its tests); that the server copies the object as written is inferred."),
        ComposeRule(
            "airship-mutable-content", .airship, "notification.ios.mutable_content: true", "aps.mutable-content: 1",
            documented: true, "Airship's API asks for it with a media attachment."),
        ComposeRule(
            "airship-alert", .airship, "notification.ios.alert (or notification.alert), title, subtitle",
            "aps.alert.body, title, subtitle", documented: false, "ios.alert wins over the top-level alert."),
        ComposeRule(
            "airship-push-id", .airship, "(the push Airship creates)", "_: 00000000-0000-0000-0000-000000000000",
            documented: false, "The server writes the push id there (the SDK's analytics read it); a stand-in."),
        ComposeRule(
            "airship-metadata", .airship, "(the push Airship creates)", "com.urbanairship.metadata: richpush-stand-in",
            documented: false,
            "The server's opaque string; the SDK knows an Airship push by this key (isAirshipPush), so richpush "
                + "writes a stand-in."),
    ]
}
