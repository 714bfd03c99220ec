import Foundation

/// The SDKs' own network calls as each SDK's source builds them (names of the source functions in
/// each doc comment). Account ids, keys and tokens are stand-ins: richpush has none of the app's.
extension SDKCall {
    /// OneSignal's receipt: `PUT /notifications/{id}/report_received`, started right after the payload
    /// is parsed, before the download, and sent after a whole-second delay of 0 to 24 s from arrival
    /// (`OneSignalNotificationServiceExtensionHandler.m@00a9990:L72-L80,L140-L146`,
    /// `OneSignalReceiveReceiptsController.m@00a9990:L95-L109`), when the App Group flag is set. The
    /// id is `os_data.i` when `os_data` is a dictionary, else `custom.i` (`OSNotification.m@00a9990:L58-L69,L84-L106`).
    static let oneSignalReceipt = SDKCall(
        name: "receipt", method: "PUT", path: "/notifications/{id}/report_received", start: .withDownload(delay: .zero),
        jitterSeconds: 24, optIn: true, condition: "the App Group flag OS_ENABLE_RECEIVE_RECEIPTS is set"
    ) { context in
        let osData = context.root["os_data"]
        let id = osData?.isObject == true ? osData?["i"]?.stringValue : context.root.string(at: ["custom", "i"])
        guard let id, !id.isEmpty else { return nil }
        let body: JSONValue = .object([
            ("app_id", .string("richpush-app")), ("player_id", .null), ("device_type", .number("0")),
        ])
        let encoded = id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? id
        return SDKRequest(
            path: "/notifications/\(encoded)/report_received", headers: ["Content-Type: application/json"],
            body: body.utf8, jitterKey: id)
    }

    /// Firebase's `MESSAGE_DELIVERED` log event: a protobuf batch to Google's data transport, only
    /// when the app's extension exports delivery metrics. Listed, not sent.
    static let firebaseDelivered = SDKCall(
        name: "MESSAGE_DELIVERED", method: "POST", path: "/GoogleDataTransport", start: .afterDisplay,
        condition: "the app calls exportDeliveryMetricsToBigQueryWithMessageInfo: (a protobuf batch)")

    /// CleverTap's "Notification Viewed" (CleverTap-iOS-SDK 7.7.0, `recordNotificationViewedEventWithData:`
    /// in the extension): the event is queued at once and the queue flushed 1 s later
    /// (`CLTAP_PUSH_DELAY_SECONDS`) as `POST https://spiky.clevertap-prod.com/a1?os=iOS&t=REV&z=ACCOUNT&ts=EPOCH`,
    /// a JSON array of the batch header (`type: meta`) and the event, whose `evtData` holds the
    /// payload's `wzrk_` keys (`W$` renamed `wzrk_`) and `wzrk_cts`; 10 s timeout
    /// (`CLTAP_REQUEST_TIME_OUT_INTERVAL`). Display does not wait for it.
    static let cleverTapViewed = SDKCall(
        name: "Notification Viewed", method: "POST", path: "/a1", start: .withDownload(delay: .seconds(1)),
        timeout: .seconds(10), optIn: true,
        condition: "the app links CleverTap-iOS-SDK in the extension and calls recordNotificationViewedEventWithData:"
    ) { context in
        let account = "RICHPUSH-ACCOUNT", token = "richpush-token", now = String(context.epochSeconds)
        var data: [(key: String, value: JSONValue)] = []
        if case .object(let members) = context.root {
            for member in members where member.key.hasPrefix("W$") || member.key.hasPrefix("wzrk_") {
                let key = member.key.hasPrefix("W$") ? "wzrk_" + member.key.dropFirst(2) : member.key
                // One key once, as in the SDK's dictionary (the later member wins).
                data.removeAll { $0.key == key }
                data.append((key, member.value))
            }
        }
        data.append(("wzrk_cts", .number(now)))
        let header: JSONValue = .object([
            ("type", .string("meta")), ("af", .object([("OS Version", .string("18.0")), ("Make", .string("Apple"))])),
            ("g", .string("-richpush-device")), ("tk", .string(token)), ("id", .string(account)),
            ("ddnd", .bool(false)), ("frs", .bool(true)), ("l_ts", .number("0")), ("f_ts", .number("0")),
        ])
        let event: JSONValue = .object([
            ("evtName", .string("Notification Viewed")), ("evtData", .object(data)), ("type", .string("event")),
            ("ep", .number(now)), ("s", .number(now)), ("pg", .number("1")), ("lsl", .number("0")),
            ("f", .bool(true)), ("n", .string("_bg")),
        ])
        return SDKRequest(
            path: "/a1?os=iOS&t=70700&z=\(account)&ts=\(now)",
            headers: [
                "Content-Type: application/json; charset=utf-8", "X-CleverTap-Account-Id: " + account,
                "X-CleverTap-Token: " + token,
            ],
            body: JSONValue.array([header, event]).utf8)
    }

    /// Customer.io's delivery metric (4.7.5, `MessagingPushImplementation` "Report Delivery Event"):
    /// `POST /v1/track` beside the image download; display waits for both.
    static let customerIOMetric = SDKCall(
        name: "delivery metric", method: "POST", path: "/v1/track", start: .withDownload(delay: .zero),
        blocksDisplay: true, condition: "CIO-Delivery-ID and CIO-Delivery-Token are present"
    ) { context in
        guard let id = context.root.string(at: ["CIO-Delivery-ID"]),
            let token = context.root.string(at: ["CIO-Delivery-Token"])
        else { return nil }
        let body: JSONValue = .object([
            ("anonymousId", .string(id)), ("event", .string("Report Delivery Event")),
            (
                "properties",
                .object([("recipient", .string(token)), ("metric", .string("delivered")), ("deliveryId", .string(id))])
            ),
        ])
        // Basic base64(cdpApiKey + ":"), with a stand-in key.
        let key = Data("richpush-cdp-key:".utf8).base64EncodedString()
        return SDKRequest(
            path: "/v1/track", headers: ["Content-Type: application/json", "Authorization: Basic " + key],
            body: body.utf8)
    }
}
