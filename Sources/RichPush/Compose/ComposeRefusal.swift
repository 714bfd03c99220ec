/// Why a request body does not compose: Braze's answer to it (HTTP status and Braze's own error
/// name, from Braze's API error list) where Braze would refuse it, or richpush's where the input is
/// not a request at all.
///
/// ```swift
/// if case .failure(let refusal) = Composer.compose(bytes) { print(refusal.status ?? 0, refusal.brazeMessage ?? "") }
/// ```
public struct ComposeRefusal: Error, Sendable, Equatable {
    /// A stable kebab-case code, one per way a request is refused.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The bytes are not JSON (Braze: 400 Bad Request).
        public static let invalidJSON = Code(rawValue: "invalid-json")
        /// JSON, but not a request body or an `apple_push` object (richpush's own; Braze has no word for it).
        public static let notARequest = Code(rawValue: "not-a-request")
        /// `extra` is not an object (Braze: 400 Invalid Extra Push Payload).
        public static let invalidExtra = Code(rawValue: "invalid-extra-payload")
        /// `extra` holds `ab` or `aps` (Braze: 400 Invalid Extra Push Payload).
        public static let reservedExtraKey = Code(rawValue: "reserved-extra-key")
        /// `asset_url` without `asset_file_type`.
        public static let missingAssetFileType = Code(rawValue: "missing-asset-file-type")
        /// `asset_file_type` outside aif, gif, jpg, m4a, mp3, mp4, png, wav.
        public static let unsupportedAssetFileType = Code(rawValue: "unsupported-asset-file-type")
        /// The composed payload is over 1,912 bytes (Braze: 400 Apple Push Length Exceeded).
        public static let applePushLengthExceeded = Code(rawValue: "apple-push-length-exceeded")
        /// A button breaks the rule for app-defined categories (`action` URI or DEEP_LINK, with `uri`).
        public static let buttonRule = Code(rawValue: "button-rule")
        /// More than 50 external ids and aliases.
        public static let tooManyRecipients = Code(rawValue: "too-many-recipients")
        /// No recipients and no `broadcast: true` (Braze: 400 No Recipients).
        public static let noRecipients = Code(rawValue: "no-recipients")
        /// `broadcast: true` beside a recipients list, `external_user_ids` or `user_aliases`, which Braze
        /// documents as an error without naming it (400 Bad Request).
        public static let broadcastWithRecipients = Code(rawValue: "broadcast-with-recipients")
        /// A request body with no message object: no `messages`, or `messages` holding none of Braze's
        /// channels (Braze: 400 No message to send).
        public static let noMessageToSend = Code(rawValue: "no-message-to-send")
        /// `campaign_id` without `message_variation_id` (Braze: 400 Message Variant Unspecified).
        public static let messageVariantUnspecified = Code(rawValue: "message-variant-unspecified")
        /// No `alert` and no `content-available: true`.
        public static let missingAlert = Code(rawValue: "missing-alert")
        /// A field of the wrong type or out of its range (a string badge, a relevance score of 2).
        public static let invalidField = Code(rawValue: "invalid-field")
    }

    public var code: Code
    /// The HTTP status Braze answers with; `nil` where Braze would never see the input as a request.
    public var status: Int?
    /// Braze's own error name, as its API error list writes it (`Invalid Extra Push Payload`).
    public var brazeMessage: String?
    /// What is wrong, naming the field.
    public var detail: String
    /// What to do.
    public var hint: String?

    public init(_ code: Code, status: Int?, brazeMessage: String?, detail: String, hint: String? = nil) {
        self.code = code
        self.status = status
        self.brazeMessage = brazeMessage
        self.detail = detail
        self.hint = hint
    }

    /// A 400 with Braze's generic `Bad Request`: the documented field rules Braze's error list gives no name of its own.
    static func badRequest(_ code: Code, _ detail: String, hint: String? = nil) -> ComposeRefusal {
        ComposeRefusal(code, status: 400, brazeMessage: "Bad Request", detail: detail, hint: hint)
    }

    /// One line: `400 Invalid Extra Push Payload: 'extra' holds 'ab' ... Hint: ...`.
    public var line: String {
        var text = ""
        if let status { text += "Braze would answer \(status)" }
        if let brazeMessage { text += (text.isEmpty ? "" : " ") + "\"\(brazeMessage)\"" }
        text += (text.isEmpty ? "" : ": ") + detail
        if let hint { text += " Hint: \(hint)" }
        return text
    }

    /// The refusal as JSON: `{"code", "status", "message", "detail", "hint"}` (absent members left out).
    package var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("code", .string(code.rawValue))]
        if let status { members.append(("status", .number(String(status)))) }
        if let brazeMessage { members.append(("message", .string(brazeMessage))) }
        members.append(("detail", .string(detail)))
        if let hint { members.append(("hint", .string(hint))) }
        return .object(members)
    }
}
