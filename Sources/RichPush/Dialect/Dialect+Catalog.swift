/// The SDKs richpush emulates, one description each (facts: each SDK's public source, named in its `source`).
extension Dialect {
    /// Braze's extension: the pipeline's original behaviour, unchanged (the default `--sdk`).
    package static let braze = Dialect(
        name: "braze", title: "Braze",
        source: "braze-inc/braze-swift-sdk (closed) and its published sample extension",
        media: .braze, markers: ["ab"], naming: .declaredType,
        allowList: nil, advisesImageSize: true, onFailure: .original, onExpiry: .original,
        inferred: ["timeouts and size checks of the closed Swift extension (the sample's are emulated)"])

    /// OneSignal's `OneSignalAttachmentHandler`.
    package static let oneSignal = Dialect(
        name: "onesignal", title: "OneSignal",
        source:
            "OneSignal/OneSignal-iOS-SDK:iOS_SDK/OneSignalSDK/OneSignalExtension/OneSignalAttachmentHandler.m@00a9990 (5.0.2)",
        media: .oneSignal, markers: ["os_data", "custom.i"],
        naming: .queryMIMEPath(mimeMap: oneSignalMIMEMap),
        allowList: ["aiff", "wav", "mp3", "mp4", "jpg", "jpeg", "png", "gif", "mpeg", "mpg", "avi", "m4a", "m4v"],
        allowListIsCaseSensitive: true, maxContentLength: 50_000_000, attachments: .sequentialUnordered,
        onFailure: .bestAttempt, onExpiry: .bestAttempt,
        bestAttemptChanges: [
            ContentChange("action buttons registered as a category", keys: ["os_data.buttons", "buttons"]),
            ContentChange("badge", keys: ["os_data.badge", "aps.badge"]),
            ContentChange("collapse id in userInfo", keys: ["os_data.collapse_id"]),
        ],
        networkCalls: [.oneSignalReceipt],
        inferred: [
            "the receipt flag's default (off unless --sdk-receipts)"
        ])

    /// Airship's `AirshipNotificationServiceExtension`.
    package static let airship = Dialect(
        name: "airship", title: "Airship",
        source: "urbanairship/ios-library:AirshipExtensions/AirshipNotificationServiceExtension/Source",
        media: .airship(["com.urbanairship.media_attachment"]),
        gate: ["com.urbanairship.media_attachment"],
        markers: ["com.urbanairship.media_attachment", "com.urbanairship.metadata"],
        naming: .pathSuffixThenHint(mimeMap: [:]),
        allowList: ["jpg", "jpeg", "png", "gif", "aif", "aiff", "mp3", "mpg", "mpeg", "mp4", "m4a", "wav", "avi"],
        attachments: .concurrentAllOrNothing, onFailure: .original, onExpiry: .original,
        textOverrides: TextOverrides(
            title: ["com.urbanairship.media_attachment", "content", "title"],
            subtitle: ["com.urbanairship.media_attachment", "content", "subtitle"],
            body: ["com.urbanairship.media_attachment", "content", "body"], keptOnFailure: false,
            appliesWithoutMedia: true),
        inferred: ["whether iOS honours the type hint Airship passes for a name without a known extension"])

    /// Firebase Messaging's `FIRMessagingExtensionHelper` (12.19.0).
    package static let firebase = Dialect(
        name: "firebase", title: "Firebase",
        source: "firebase/firebase-ios-sdk:FirebaseMessaging/Sources/FIRMessagingExtensionHelper.m@eed63a3 (12.19.0)",
        media: .url(path: ["fcm_options", "image"], wrongType: .ignored),
        markers: ["fcm_options", "gcm.message_id", "google.c.a.e"],
        naming: .suggestedFilename(imageSubtypeFallback: .sanitised, stem: .extensionOnly), onFailure: .original,
        onExpiry: .original,
        networkCalls: [.firebaseDelivered],
        inferred: [
            "when suggestedFilename appends an extension from the MIME type",
            "expiry: the helper has none; the sample extension delivers the original",
        ])

    /// Iterable's `ITBNotificationServiceExtension`.
    package static let iterable = Dialect(
        name: "iterable", title: "Iterable",
        source: "Iterable/iterable-swift-sdk:notification-extension/ITBNotificationServiceExtension.swift@25cd00e",
        media: .url(path: ["itbl", "attachment-url"], wrongType: .ignored), markers: ["itbl"],
        naming: .suggestedFilename(imageSubtypeFallback: .none, stem: .prefixed("")), onFailure: .bestAttempt,
        onExpiry: .bestAttempt,
        bestAttemptChanges: [
            ContentChange("category named after itbl.messageId, with its action buttons", keys: ["itbl.actionButtons"])
        ],
        inferred: ["when suggestedFilename appends an extension from the MIME type"])

    /// CleverTap's `CTNotificationServiceExtension`.
    package static let cleverTap = Dialect(
        name: "clevertap", title: "CleverTap",
        source: "CleverTap/CTNotificationService:CTNotificationService/CTNotificationServiceExtension.m@9fb05bd",
        media: .url(path: ["ct_mediaUrl"], type: ["ct_mediaType"], wrongType: .raises),
        gate: ["ct_mediaUrl", "ct_mediaType"],
        gateMissing: .showsOriginal(.attachmentTypeMissing),
        markers: ["ct_mediaUrl", "wzrk_pn", "W$pn"],
        naming: .declaredKind(
            map: ["image": "jpg", "video": "mp4", "audio": "mp3"],
            mimeFallback: ["image/jpeg": "jpeg", "image/png": "png", "image/gif": "gif"]),
        onFailure: .bestAttempt, onExpiry: .bestAttempt,
        networkCalls: [.cleverTapViewed],
        inferred: [
            "whether iOS animates a GIF named .jpg",
            "Notification Viewed: the handshake (GET /hello) a process without a cached domain makes first is not sent",
        ])

    /// Customer.io's `MessagingPush` rich push (4.7.5).
    package static let customerIO = Dialect(
        name: "customerio", title: "Customer.io",
        source: "customerio/customerio-ios@8b9ee36 (4.7.5), Sources/MessagingPush",
        media: .url(path: ["CIO", "push", "image"], wrongType: .ignored, gateNeedsStrings: true),
        gate: ["CIO-Delivery-ID", "CIO-Delivery-Token"],
        markers: ["CIO-Delivery-ID", "CIO"],
        naming: .suggestedFilename(imageSubtypeFallback: .none, stem: .prefixed("_")),
        resourceTimeout: .seconds(30),
        onFailure: .original, onExpiry: .composedIfReady,
        networkCalls: [.customerIOMetric],
        inferred: ["when suggestedFilename appends an extension from the MIME type"])

    /// Klaviyo's `KlaviyoExtension`.
    package static let klaviyo = Dialect(
        name: "klaviyo", title: "Klaviyo",
        source: "klaviyo/klaviyo-swift-sdk:Sources/KlaviyoSwiftExtension/KlaviyoExtension.swift@67a8b4c",
        media: .url(path: ["rich-media"], type: ["rich-media-type"], defaultType: "jpg", wrongType: .ignored),
        markers: ["rich-media", "body._k"], naming: .declaredTypeAsWritten, onFailure: .bestAttempt,
        onExpiry: .bestAttempt,
        bestAttemptChanges: [
            ContentChange("action buttons (body.action_buttons)", keys: ["body.action_buttons", "body.actions"]),
            ContentChange("badge (badge_config, in the klaviyo_app_group suite)", keys: ["badge_config"]),
        ])

    /// MoEngage's `MORichNotification` (closed source: headers, samples, changelog).
    package static let moEngage = Dialect(
        name: "moengage", title: "MoEngage",
        source: "moengage/MoEngage-iOS-SDK (closed): MORichNotification.h, ChangeLogs 8.01.10",
        media: .url(path: ["moengage", "media-attachment"], type: ["moengage", "media-type"]),
        markers: ["moengage", "moeFeatures"], naming: .mimeThenPath(mimeMap: [:]),
        onFailure: .bestAttempt, onExpiry: .bestAttempt,
        inferred: [
            "timeouts, size checks and allowed types (closed source)",
            "whether the impression is also sent over the network",
        ])

    /// The sample extension Expo's documentation points to (expo/expo PR #36202).
    package static let expo = Dialect(
        name: "expo", title: "Expo",
        source:
            "expo/expo PR #36202: apps/notification-tester/targets/notification-service/NotificationService.swift@74af81f",
        media: .url(path: ["body", "_richContent", "image"]),
        markers: ["body._richContent", "experienceId", "scopeKey"],
        naming: .fixed("jpg"), onFailure: .bestAttempt, onExpiry: .bestAttempt,
        inferred: ["the push service's mapping of richContent.image to body._richContent.image"])

    /// notifee's `NotifeeCoreExtensionHelper`.
    package static let notifee = Dialect(
        name: "notifee", title: "notifee",
        source: "invertase/notifee:ios/NotifeeCore/NotifeeCoreExtensionHelper.m@b73c76d",
        media: .notifee,
        gate: ["notifee_options"], markers: ["notifee_options"],
        naming: .suggestedFilename(imageSubtypeFallback: .raw, stem: .extensionOnly), attachments: .firstOnly,
        onFailure: .bestAttempt, onExpiry: .original,
        textOverrides: TextOverrides(
            title: ["notifee_options", "title"], subtitle: ["notifee_options", "subtitle"],
            body: ["notifee_options", "body"], keptOnFailure: true),
        inferred: ["whether iOS honours the type hint notifee passes"])

    /// Every dialect, in the order `sdk list` shows them (Braze first, the default).
    public static let all: [Dialect] = [
        .braze, .oneSignal, .airship, .firebase, .iterable, .cleverTap, .customerIO, .klaviyo, .moEngage, .expo,
        .notifee,
    ]

    /// The dialect called `name` (case-insensitive), or nil.
    public static func named(_ name: String) -> Dialect? {
        let lower = name.lowercased()
        return all.first { $0.name == lower }
    }

    /// OneSignal's MIME map: `sound/m4a`, no `audio/wav`, no `image/webp`.
    static let oneSignalMIMEMap: [String: String] = [
        "audio/aiff": "aiff", "audio/x-wav": "wav", "audio/mpeg": "mp3", "video/mp4": "mp4", "image/jpeg": "jpeg",
        "image/jpg": "jpg", "image/png": "png", "image/gif": "gif", "video/mpeg": "mpeg", "video/mpg": "mpg",
        "video/avi": "avi", "sound/m4a": "m4a", "video/m4v": "m4v",
    ]
}
