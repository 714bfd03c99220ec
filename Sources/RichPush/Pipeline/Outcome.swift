/// Everything known about one payload's run through the emulated extension: the full report.
public struct Outcome: Sendable, Codable {
    /// Download facts for the report; times in milliseconds, cumulative from the transfer's start.
    public struct Download: Sendable, Codable, Equatable {
        public var status: Int
        public var effectiveURL: String
        public var redirects: Int
        public var contentType: String?
        public var contentEncoding: String?
        public var bytes: Int64
        public var queueMilliseconds: Double
        public var dnsMilliseconds: Double
        public var connectMilliseconds: Double
        public var tlsMilliseconds: Double
        public var firstByteMilliseconds: Double
        public var totalMilliseconds: Double
        /// The same times at full precision (not part of the JSON report).
        public var timings = FetchTimings()

        enum CodingKeys: String, CodingKey {
            case status, effectiveURL, redirects, contentType, contentEncoding, bytes, queueMilliseconds
            case dnsMilliseconds, connectMilliseconds, tlsMilliseconds, firstByteMilliseconds, totalMilliseconds
        }

        public init(_ result: FetchResult) {
            timings = result.timings
            status = result.httpStatus
            effectiveURL = result.effectiveURL
            redirects = result.redirectCount
            contentType = result.contentType
            contentEncoding = result.contentEncoding
            bytes = result.bytes
            let t = result.timings
            queueMilliseconds = t.queue.inMilliseconds
            dnsMilliseconds = t.dns.inMilliseconds
            connectMilliseconds = t.connect.inMilliseconds
            tlsMilliseconds = t.tls.inMilliseconds
            firstByteMilliseconds = t.firstByte.inMilliseconds
            totalMilliseconds = t.total.inMilliseconds
        }
    }

    /// The stored attachment, as the extension would hand it to UNNotificationAttachment.
    public struct Attachment: Sendable, Codable, Equatable {
        /// Absolute path of the stored file; `nil` when the run keeps no attachments (a bench without `--out`).
        public var file: String?
        public var uti: String
        public var bytes: Int64
        public var sha256: String
        /// The normalised file extension it was stored under (the declared type).
        public var type: String
        public var attachmentClass: AttachmentClass
    }

    public var verdict: Verdict
    public var reason: ReasonCode
    /// What happened and, for a failure, what to do.
    public var message: String
    /// A likely cause, for the classic mistakes.
    public var hint: String?
    /// Apple's UNError code for this failure, where one applies.
    public var unError: Int?
    public var warnings: [Warning] = []
    /// The payload's size in bytes as received.
    public var payloadBytes: Int
    /// `ab.att.url`, when present and a string.
    public var url: String?
    /// `ab.att.type` as written, when present and a string.
    public var declaredType: String?
    public var download: Download?
    public var sniff: Sniff?
    public var attachment: Attachment?
    /// Which expanded view the user gets, when the app's content extensions are known (`--app`).
    /// Separate from the verdict: an image can show in a view that crashes.
    public var contentExtension: ContentOutcome?
    /// Time from the start of the run to the verdict.
    public var elapsedMilliseconds: Double = 0

    public init(
        verdict: Verdict, reason: ReasonCode, message: String, hint: String? = nil, payloadBytes: Int
    ) {
        self.verdict = verdict
        self.reason = reason
        self.message = message
        self.hint = hint
        self.unError = reason.unErrorCode
        self.payloadBytes = payloadBytes
    }

    /// The object added to the payload under the top-level key `richpush`.
    public var payloadSummary: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("verdict", .string(verdict.rawValue)),
            ("reason", .string(reason.rawValue)),
            ("message", .string(message)),
        ]
        if let hint { members.append(("hint", .string(hint))) }
        if let unError { members.append(("un_error", .number(String(unError)))) }
        members.append(
            (
                "warnings",
                .array(warnings.map { .object([("code", .string($0.code)), ("message", .string($0.message))]) })
            ))
        if let attachment {
            members.append(
                (
                    "attachments",
                    .array([
                        .object(
                            (attachment.file.map { [("file", JSONValue.string($0))] } ?? []) + [
                                ("uti", .string(attachment.uti)),
                                ("bytes", .number(String(attachment.bytes))),
                                ("sha256", .string(attachment.sha256)),
                                ("type", .string(attachment.type)),
                            ])
                    ])
                ))
        }
        if let contentExtension { members.append(("content_extension", contentExtension.json)) }
        return .object(members)
    }

    /// One line for people: `attached: public.jpeg, 4207 bytes, 52 ms` or `fallback [reason]: message`.
    public var summaryLine: String {
        let time =
            elapsedMilliseconds >= 1000
            ? String(format: "%.1f s", elapsedMilliseconds / 1000) : String(format: "%.0f ms", elapsedMilliseconds)
        var line: String
        if verdict == .attached, let attachment {
            line = "attached: \(attachment.uti), \(attachment.bytes) bytes, \(time)"
            if let file = attachment.file { line += " -> \(file)" }
        } else {
            line = "\(verdict.rawValue) [\(reason.rawValue)]: \(message)"
            if let hint { line += " Hint: \(hint)" }
        }
        for warning in warnings { line += "\n  warning [\(warning.code)]: \(warning.message)" }
        return line
    }
}
