/// OneSignal's `POST /notifications` body to the payload its SDK reads (``ComposeRule/oneSignal``).
///
/// Only what OneSignal's API reference and SDK source document: `ios_attachments {id: url}` becomes the `att` dictionary the
/// extension downloads from, with `mutable-content` so iOS runs it, and the English heading,
/// subtitle and contents as the alert. OneSignal's own error words are not known, so refusals carry
/// no status.
///
/// Every payload carries `custom.i`, the notification's id, as OneSignal's server delivers it: the SDK
/// reads its fields from `custom` when there is no `os_data` dictionary (`i` the id, `a` the additional
/// data, from the request's `data`), and without an id it sends no receipt and tracks no session
/// (OneSignal/OneSignal-iOS-SDK:iOS_SDK/OneSignalSDK/OneSignalCore/Source/OSNotification.m@67f35f9,
/// `parseOriginalPayload`; OneSignalExtension/OneSignalNotificationServiceExtensionHandler.m@c9b5142).
/// It is also the key `process --sdk auto` knows OneSignal by.
enum OneSignalComposer {
    /// The notification id in `custom.i`. OneSignal's server gives each notification a UUID (the API
    /// answers with it as `id`); a composer cannot know it, so this stand-in (the nil UUID) is written.
    static let standInNotificationID = "00000000-0000-0000-0000-000000000000"

    static func compose(_ root: JSONValue) -> Result<ComposedPush, ComposeRefusal> {
        func refuse(_ detail: String, hint: String? = nil) -> Result<ComposedPush, ComposeRefusal> {
            .failure(ComposeRefusal(.invalidField, status: nil, brazeMessage: nil, detail: detail, hint: hint))
        }
        guard case .object = root else { return refuse("the request is \(root.typeName), not a JSON object.") }
        if root["aps"] != nil {
            return .failure(
                ComposeRefusal(
                    .notARequest, status: nil, brazeMessage: nil,
                    detail: "this is already an APNs payload (it has 'aps'), not a OneSignal request.",
                    hint: "Run it through 'richpush process' as it is."))
        }
        var rules: [String] = []
        var warnings: [Warning] = []
        var alert: [(key: String, value: JSONValue)] = []
        for (field, key) in [("headings", "title"), ("subtitle", "subtitle"), ("contents", "body")] {
            guard let value = root[field] else { continue }
            guard case .object = value else {
                return refuse("\(field) is \(value.typeName), not an object of languages.")
            }
            guard let english = value["en"] else {
                warnings.append(
                    Warning(
                        "onesignal-no-english",
                        "\(field) has no 'en' text; richpush composes the English alert only, so it leaves it out."))
                continue
            }
            guard case .string = english else { return refuse("\(field).en is \(english.typeName), not a string.") }
            alert.append((key, english))
            rules.append("onesignal-alert")
        }
        var aps: [(key: String, value: JSONValue)] = []
        if !alert.isEmpty { aps.append(("alert", .object(alert))) }
        var attachments: JSONValue?
        if let value = root["ios_attachments"] {
            guard case .object(let members) = value else {
                return refuse(
                    "ios_attachments is \(value.typeName), not an object of id: url.",
                    hint: "Write ios_attachments as {\"id1\": \"https://example.com/image.jpg\"}.")
            }
            for member in members {
                guard case .string = member.value else {
                    return refuse("ios_attachments.\(member.key) is \(member.value.typeName), not a URL string.")
                }
            }
            if members.isEmpty {
                warnings.append(Warning("onesignal-no-attachments", "ios_attachments is empty: nothing to download."))
            }
            attachments = value
            rules.append("onesignal-attachments")
        }
        var mutable = false
        if let value = root["mutable_content"] {
            guard case .bool(let flag) = value else {
                return refuse("mutable_content is \(value.typeName), not a boolean.")
            }
            mutable = flag
        }
        if attachments != nil || mutable {
            aps.append(("mutable-content", .number("1")))
            rules.append("onesignal-mutable-content")
        }
        guard !aps.isEmpty else {
            return .failure(
                ComposeRefusal(
                    .missingAlert, status: nil, brazeMessage: nil,
                    detail: "the request has no contents, headings or ios_attachments: nothing for iOS to show.",
                    hint: "Give contents: {\"en\": \"text\"}."))
        }
        var custom: [(key: String, value: JSONValue)] = [("i", .string(standInNotificationID))]
        rules.append("onesignal-notification-id")
        if let data = root["data"] {
            guard case .object = data else {
                return refuse(
                    "data is \(data.typeName), not an object of key-value pairs.",
                    hint: "Write data as {\"key\": \"value\"}.")
            }
            custom.append(("a", data))
            rules.append("onesignal-data")
        }
        var payload: [(key: String, value: JSONValue)] = [("aps", .object(aps)), ("custom", .object(custom))]
        if let attachments { payload.append(("att", attachments)) }
        return .success(
            ComposedPush(
                payload: .object(payload), headers: APNsHeaders(pushType: .alert), warnings: warnings, rules: rules))
    }
}
