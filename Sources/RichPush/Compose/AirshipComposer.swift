/// Airship's push API body to the payload its SDK reads (``ComposeRule/airship``).
///
/// `notification.ios.media_attachment {url, options, content}` becomes
/// `com.urbanairship.media_attachment` as written, the alert, title and subtitle become
/// `aps.alert`, and `mutable_content: true` becomes `aps.mutable-content: 1`. Airship's own error
/// words are not known, so refusals carry no status.
///
/// Every payload carries the two keys Airship's server adds to each push: `_`, the push id, and
/// `com.urbanairship.metadata`, an opaque string. The SDK knows an Airship push by the metadata key
/// (`isAirshipPush()`, urbanairship/ios-library:Airship/AirshipCore/Source/AirshipPush.swift@4c5c03b)
/// and reports both in its push analytics; `process --sdk auto` knows Airship by it too, with or
/// without a media attachment. Their values are the server's, so stand-ins are written.
enum AirshipComposer {
    static let mediaKey = "com.urbanairship.media_attachment"
    /// The key of the push id Airship's server writes.
    static let pushIDKey = "_"
    /// The key of Airship's opaque push metadata.
    static let metadataKey = "com.urbanairship.metadata"
    /// The push id written as `_`. Airship's server assigns it (the API answers with `push_ids`).
    static let standInPushID = "00000000-0000-0000-0000-000000000000"
    /// The metadata written: the server's value is opaque to the SDK, which only passes it on.
    static let standInMetadata = "richpush-stand-in"

    static func compose(_ root: JSONValue) -> Result<ComposedPush, ComposeRefusal> {
        func refuse(_ detail: String, code: ComposeRefusal.Code = .invalidField, hint: String? = nil) -> Result<
            ComposedPush, ComposeRefusal
        > {
            .failure(ComposeRefusal(code, status: nil, brazeMessage: nil, detail: detail, hint: hint))
        }
        guard case .object = root else { return refuse("the request is \(root.typeName), not a JSON object.") }
        if root["aps"] != nil {
            return refuse(
                "this is already an APNs payload (it has 'aps'), not an Airship request.", code: .notARequest,
                hint: "Run it through 'richpush process' as it is.")
        }
        if let types = root["device_types"] {
            let sendsToIOS: Bool
            switch types {
            case .string(let text): sendsToIOS = text == "all"
            case .array(let items): sendsToIOS = items.contains(.string("ios"))
            default: return refuse("device_types is \(types.typeName), not \"all\" or an array.")
            }
            guard sendsToIOS else {
                return refuse("device_types does not include ios, so Airship sends nothing to iOS.", code: .notARequest)
            }
        }
        guard let notification = root["notification"], case .object = notification else {
            return refuse("the request has no notification object.", code: .notARequest, hint: "Add notification.ios.")
        }
        let ios = notification["ios"] ?? .object([])
        guard case .object = ios else { return refuse("notification.ios is \(ios.typeName), not an object.") }
        var rules: [String] = []
        var warnings: [Warning] = []
        var alert: [(key: String, value: JSONValue)] = []
        for (field, key) in [("title", "title"), ("subtitle", "subtitle")] {
            guard let value = ios[field] else { continue }
            guard case .string = value else {
                return refuse("notification.ios.\(field) is \(value.typeName), not a string.")
            }
            alert.append((key, value))
        }
        if let body = ios["alert"] ?? notification["alert"] {
            guard case .string = body else { return refuse("the alert is \(body.typeName), not a string.") }
            alert.append(("body", body))
        }
        var aps: [(key: String, value: JSONValue)] = []
        if !alert.isEmpty {
            aps.append(("alert", .object(alert)))
            rules.append("airship-alert")
        }
        var mutable = false
        if let value = ios["mutable_content"] {
            guard case .bool(let flag) = value else {
                return refuse("notification.ios.mutable_content is \(value.typeName), not a boolean.")
            }
            mutable = flag
        }
        if mutable {
            aps.append(("mutable-content", .number("1")))
            rules.append("airship-mutable-content")
        }
        var media: JSONValue?
        if let value = ios["media_attachment"] {
            guard case .object = value else {
                return refuse("notification.ios.media_attachment is \(value.typeName), not an object.")
            }
            switch value["url"] {
            case .string?, .array?: break
            case let other?: return refuse("media_attachment.url is \(other.typeName), not a URL or a list of URLs.")
            case nil: return refuse("media_attachment has no url.")
            }
            media = value
            rules.append("airship-media")
            if !mutable {
                warnings.append(
                    Warning(
                        "airship-mutable-content-missing",
                        "notification.ios.media_attachment is given without mutable_content: true, so iOS never runs "
                            + "the extension and the media is not shown. Add \"mutable_content\": true."))
            }
        }
        guard !aps.isEmpty || media != nil else {
            return refuse(
                "notification.ios has no alert, title or media_attachment: nothing to show.", code: .missingAlert)
        }
        var payload: [(key: String, value: JSONValue)] = [("aps", .object(aps))]
        if let media { payload.append((mediaKey, media)) }
        payload += [(pushIDKey, .string(standInPushID)), (metadataKey, .string(standInMetadata))]
        rules += ["airship-push-id", "airship-metadata"]
        return .success(
            ComposedPush(
                payload: .object(payload), headers: APNsHeaders(pushType: .alert), warnings: warnings, rules: rules))
    }
}
