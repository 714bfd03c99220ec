/// What the phone would show for a payload.
///
/// Its description is its JSON value (`not-invoked`), so Swift's string interpolation and the
/// reports say the same thing.
public enum Verdict: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// The attachment would show.
    case attached
    /// The extension ran but the attachment would not show: the plain notification appears.
    case fallback
    /// The budget ran out: iOS calls `serviceExtensionTimeWillExpire`, the plain notification appears.
    case expired
    /// iOS would not run the extension at all (no `mutable-content: 1`, or no alert).
    case notInvoked = "not-invoked"
    /// The payload asks for no attachment; the notification shows as intended.
    case noAttachment = "no-attachment"
    /// APNs would refuse the payload, or it is not a payload at all.
    case rejected

    /// The kebab-case code, as the JSON outputs write it.
    public var description: String { rawValue }

    /// Whether the notification shows as the payload intends.
    public var showsAsIntended: Bool { self == .attached || self == .noAttachment }
}

/// Why a payload got its verdict: a stable kebab-case code, mirroring Apple's UNError where one applies.
///
/// The raw values never change once released; reports, CI gates and dashboards key on them. The
/// guide (docs/guide.md) has the same table, and a test checks that it lists every code. The description is the
/// code (`http-status`, not `httpStatus`), so Swift's string interpolation and the JSON agree.
public enum ReasonCode: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    // attached / no-attachment
    case ok
    case noAttachmentRequested = "no-attachment-requested"
    // rejected
    case unreadableInput = "unreadable-input"
    case invalidJSON = "invalid-json"
    case notAnObject = "not-an-object"
    case payloadTooLarge = "payload-too-large"
    case apsMissing = "aps-missing"
    case apsNotAnObject = "aps-not-an-object"
    // not-invoked
    case mutableContentMissing = "mutable-content-missing"
    case mutableContentNotOne = "mutable-content-not-one"
    case noAlert = "no-alert"
    // fallback: the attachment request
    case attachmentNotAnObject = "attachment-not-an-object"
    case attachmentURLMissing = "attachment-url-missing"
    case attachmentURLNotAString = "attachment-url-not-a-string"
    case attachmentTypeMissing = "attachment-type-missing"
    case attachmentTypeNotAString = "attachment-type-not-a-string"
    case unsupportedType = "unsupported-type"
    case invalidURL = "invalid-url"
    // fallback: policy and download
    case atsBlocked = "ats-blocked"
    case schemeNotAllowed = "scheme-not-allowed"
    case redirectNotAllowed = "redirect-not-allowed"
    case tooManyRedirects = "too-many-redirects"
    case dnsFailed = "dns-failed"
    case connectFailed = "connect-failed"
    case connectTimeout = "connect-timeout"
    case tlsFailed = "tls-failed"
    case stalled
    case httpStatus = "http-status"
    case truncated
    case connectionReset = "connection-reset"
    case protocolError = "protocol-error"
    case transferFailed = "transfer-failed"
    /// richpush itself ran out of file descriptors: the client's limit, which says nothing of the host.
    case tooManyOpenFiles = "too-many-open-files"
    case fileTooLarge = "file-too-large"
    // fallback: the bytes
    case contentUnrecognized = "content-unrecognized"
    case contentClassMismatch = "content-class-mismatch"
    case contentFormatMismatch = "content-format-mismatch"
    case storageFailed = "storage-failed"
    /// The SDK's extension raises an uncaught exception on this payload (a value of a type its code does
    /// not check): the extension process dies and iOS shows the notification as sent.
    case extensionRaised = "extension-raised"
    // expired
    case deadlineExceeded = "deadline-exceeded"
    case cancelled
    /// A send request (`--braze-request`, `batch --braze-requests`) Braze would refuse: nothing is delivered.
    case requestRefused = "request-refused"

    /// The kebab-case code, as the JSON outputs write it.
    public var description: String { rawValue }

    /// The UNError code iOS would raise for this failure, where one applies.
    ///
    /// 100 invalid URL, 101 unrecognized type, 102 invalid file size, 104 move into data store failed.
    public var unErrorCode: Int? {
        switch self {
        case .invalidURL, .attachmentURLMissing, .attachmentURLNotAString: return 100
        case .unsupportedType, .attachmentTypeMissing, .attachmentTypeNotAString, .contentUnrecognized,
            .contentClassMismatch, .contentFormatMismatch:
            return 101
        case .fileTooLarge: return 102
        case .storageFailed: return 104
        case .ok, .noAttachmentRequested, .unreadableInput, .invalidJSON, .notAnObject, .payloadTooLarge, .apsMissing,
            .apsNotAnObject, .mutableContentMissing, .mutableContentNotOne, .noAlert, .attachmentNotAnObject,
            .atsBlocked,
            .schemeNotAllowed, .redirectNotAllowed, .tooManyRedirects, .dnsFailed, .connectFailed, .connectTimeout,
            .tlsFailed, .stalled, .httpStatus, .truncated, .connectionReset, .protocolError, .transferFailed,
            .tooManyOpenFiles, .deadlineExceeded, .cancelled, .requestRefused, .extensionRaised:
            // No UNError: iOS fails these before or outside UNNotificationAttachment.
            return nil
        }
    }
}

/// Something worth knowing that does not change the verdict.
public struct Warning: Sendable, Decodable, Equatable {
    /// A stable kebab-case code.
    public var code: String
    /// What it means and what to do.
    public var message: String

    public init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The warning as JSON: `{"code": ..., "message": ...}`.
    package var json: JSONValue { .object([("code", .string(code)), ("message", .string(message))]) }

    /// The warning as JSON: `{"code", "message"}`.
    public var jsonText: String { json.text }
}
