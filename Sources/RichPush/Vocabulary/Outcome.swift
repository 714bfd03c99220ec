/// Everything known about one payload's run through the emulated extension: the full report.
///
/// Its JSON (``jsonText``, its one serializer; `Decodable` reads the same keys) is richpush's one outcome shape: the
/// payload's `richpush` object, the report of one processed payload, each batch record, each line of
/// the demo's JSON and (its `download`) the report of one download. The guide's "JSON outputs" table (docs/guide.md)
/// lists the fields, and `Samples/schemas/outcome.schema.json` pins them down.
public struct Outcome: Sendable, Decodable, Equatable {
    /// Download facts for the report.
    public struct Download: Sendable, Decodable, Equatable {
        public var status: Int
        public var effectiveURL: String
        public var redirects: Int
        public var contentType: String?
        /// The Content-Encoding the server sent; gzip, deflate and br are decoded before the file is stored.
        public var contentEncoding: String?
        /// Body bytes stored (decoded): what Apple's size caps count.
        public var bytes: Int64
        /// Body bytes that came over the connection, before decoding (JSON: `wire_bytes`); `nil` only in
        /// records written before richpush reported it.
        public var wireBytes: Int64?
        /// The HTTP version of the last response, "1.1" or "2" (JSON: `http_version`); `nil` when no
        /// response arrived.
        public var httpVersion: String?
        /// Milestones from the transfer's start (JSON: `timings_ms`).
        public var timings: FetchTimings
        /// What the response's cache headers said, when the fetch policy read them (a bench's devices):
        /// not in the outcome's JSON.
        package var cache = CacheResult.none
        /// New connections the download opened (0: it reused one): not in the outcome's JSON.
        public var connectionsMade = 0

        enum CodingKeys: String, CodingKey {
            case status
            case effectiveURL = "effective_url"
            case redirects
            case contentType = "content_type"
            case contentEncoding = "content_encoding"
            case bytes
            case wireBytes = "wire_bytes"
            case httpVersion = "http_version"
            case timings = "timings_ms"
        }

        public init(_ result: FetchResult) {
            status = result.httpStatus
            effectiveURL = result.effectiveURL
            redirects = result.redirectCount
            contentType = result.contentType
            contentEncoding = result.contentEncoding
            bytes = result.bytes
            wireBytes = result.wireBytes
            httpVersion = result.httpVersion.isEmpty ? nil : result.httpVersion
            timings = result.timings
            cache = result.cache
            connectionsMade = result.connectionsMade
        }

        /// The `download` object.
        package var json: JSONValue {
            var members: [(key: String, value: JSONValue)] = [
                (CodingKeys.status.rawValue, .number(String(status))),
                (CodingKeys.effectiveURL.rawValue, .string(effectiveURL)),
                (CodingKeys.redirects.rawValue, .number(String(redirects))),
            ]
            if let contentType { members.append((CodingKeys.contentType.rawValue, .string(contentType))) }
            if let contentEncoding { members.append((CodingKeys.contentEncoding.rawValue, .string(contentEncoding))) }
            members.append((CodingKeys.bytes.rawValue, .number(String(bytes))))
            if let wireBytes { members.append((CodingKeys.wireBytes.rawValue, .number(String(wireBytes)))) }
            if let httpVersion { members.append((CodingKeys.httpVersion.rawValue, .string(httpVersion))) }
            members.append((CodingKeys.timings.rawValue, timings.json))
            return .object(members)
        }
    }

    /// The stored attachment, as the extension would hand it to UNNotificationAttachment.
    public struct Attachment: Sendable, Decodable, Equatable {
        /// Absolute path of the stored file; `nil` when the run keeps no attachments (a bench with no output folder).
        public var file: String?
        public var uti: String
        public var bytes: Int64
        /// SHA-256 of the bytes, hex; `nil` when nothing was stored (hashing is only for the store's name).
        public var sha256: String?
        /// The normalised file extension it was stored under (the declared type).
        public var type: String
        public var attachmentClass: AttachmentClass

        public init(
            file: String?, uti: String, bytes: Int64, sha256: String?, type: String, attachmentClass: AttachmentClass
        ) {
            self.file = file
            self.uti = uti
            self.bytes = bytes
            self.sha256 = sha256
            self.type = type
            self.attachmentClass = attachmentClass
        }

        enum CodingKeys: String, CodingKey {
            case file, uti, bytes, sha256, type
            case attachmentClass = "class"
        }

        /// The `attachment` object.
        package var json: JSONValue {
            .object(
                (file.map { [(CodingKeys.file.rawValue, JSONValue.string($0))] } ?? []) + [
                    (CodingKeys.uti.rawValue, .string(uti)),
                    (CodingKeys.bytes.rawValue, .number(String(bytes))),
                ] + (sha256.map { [(CodingKeys.sha256.rawValue, JSONValue.string($0))] } ?? []) + [
                    (CodingKeys.type.rawValue, .string(type)),
                    (CodingKeys.attachmentClass.rawValue, .string(attachmentClass.rawValue)),
                ])
        }
    }

    public var verdict: Verdict
    public var reason: ReasonCode
    /// What happened and, for a failure, what to do.
    public var message: String
    /// A likely cause, for the classic mistakes.
    public var hint: String?
    /// For `tls-failed`: which TLS problem it was (JSON `tls_problem`, e.g. `hostname-mismatch`).
    package var tlsProblem: TLSProblem?
    /// Apple's UNError code for this failure, where one applies.
    public var unError: Int?
    public var warnings: [Warning] = []
    /// The payload's size in bytes as received.
    public var payloadBytes: Int
    /// `ab.att.url`, when present and a string.
    public var url: String?
    /// `ab.att.type` as written, when present and a string.
    public var declaredType: String?
    public var attachment: Attachment?
    public var download: Download?
    package var sniff: Sniff?
    /// Which expanded view the user gets, when the app's content extensions are known.
    /// Separate from the verdict: an image can show in a view that crashes.
    package var contentExtension: ContentOutcome?
    /// Time from the start of the run to the verdict, in milliseconds (measured to 0.01).
    public var elapsedMilliseconds: Double = 0
    /// The request the payload was composed from, when it was (`process --braze-request`).
    package var composed: Composition?
    /// The SDK dialect that ran (``Dialect/name``); nil when the run was not given `--sdk` (Braze, as ever).
    public var sdk: String? = nil
    /// The file the SDK wrote for the (first) attachment and the rule that named it (JSON `sdk_file`).
    package var sdkFile: Naming? = nil
    /// Each media item of an SDK that takes several (OneSignal, Airship), in the order iOS gets them;
    /// the outcome's own `attachment` is the first shown, the thumbnail.
    public var attachments: [Item]? = nil
    /// What the user sees (JSON `delivered`), for a run given `--sdk`.
    package var delivered: DeliveredContent? = nil
    /// The dialect's rules that no source states, which this outcome depends on.
    public var inferred: [String]? = nil
    /// The SDK's own network calls (JSON `sdk_calls`): sent to `--sdk-endpoint`, or modelled.
    package var sdkCalls: [SDKCallReport]? = nil
    /// The download as `curl -v` shows it, escaped, when the fetch policy asked for a trace
    /// (`FetchPolicy.tracesTransfer`); not part of the JSON.
    public var trace: [String]? = nil

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

    enum CodingKeys: String, CodingKey, CaseIterable {
        case verdict, reason, message, hint
        case tlsProblem = "tls_problem"
        case unError = "un_error"
        case warnings, url
        case declaredType = "declared_type"
        case payloadBytes = "payload_bytes"
        case attachment, download, sniff
        case contentExtension = "content_extension"
        case elapsedMilliseconds = "elapsed_ms"
        case composed
        case sdk
        case sdkFile = "sdk_file"
        case attachments, delivered, inferred
        case sdkCalls = "sdk_calls"
    }

    /// The outcome as JSON members, in reading order; absent optionals are left out, as `JSONEncoder` does.
    ///
    /// Built directly rather than through `JSONEncoder`, which costs more than the rest of a batch
    /// payload's bookkeeping; the `Decodable` conformance reads the same keys.
    package var jsonMembers: [(key: String, value: JSONValue)] {
        var members: [(key: String, value: JSONValue)] = [
            (CodingKeys.verdict.rawValue, .string(verdict.rawValue)),
            (CodingKeys.reason.rawValue, .string(reason.rawValue)),
            (CodingKeys.message.rawValue, .string(message)),
        ]
        if let hint { members.append((CodingKeys.hint.rawValue, .string(hint))) }
        if let tlsProblem { members.append((CodingKeys.tlsProblem.rawValue, .string(tlsProblem.description))) }
        if let unError { members.append((CodingKeys.unError.rawValue, .number(String(unError)))) }
        members.append((CodingKeys.warnings.rawValue, .array(warnings.map(\.json))))
        if let url { members.append((CodingKeys.url.rawValue, .string(url))) }
        if let declaredType { members.append((CodingKeys.declaredType.rawValue, .string(declaredType))) }
        members.append((CodingKeys.payloadBytes.rawValue, .number(String(payloadBytes))))
        if let attachment { members.append((CodingKeys.attachment.rawValue, attachment.json)) }
        if let download { members.append((CodingKeys.download.rawValue, download.json)) }
        if let sniff { members.append((CodingKeys.sniff.rawValue, sniff.json)) }
        members.append(
            (
                CodingKeys.elapsedMilliseconds.rawValue,
                .number(elapsedMilliseconds.isFinite ? String(elapsedMilliseconds) : "0")
            ))
        if let contentExtension { members.append((CodingKeys.contentExtension.rawValue, contentExtension.json)) }
        if let composed { members.append((CodingKeys.composed.rawValue, composed.json)) }
        if let sdk { members.append((CodingKeys.sdk.rawValue, .string(sdk))) }
        if let sdkFile { members.append((CodingKeys.sdkFile.rawValue, sdkFile.json)) }
        if let attachments { members.append((CodingKeys.attachments.rawValue, .array(attachments.map(\.json)))) }
        if let delivered { members.append((CodingKeys.delivered.rawValue, delivered.json)) }
        if let inferred { members.append((CodingKeys.inferred.rawValue, .array(inferred.map { .string($0) }))) }
        if let sdkCalls { members.append((CodingKeys.sdkCalls.rawValue, .array(sdkCalls.map(\.json)))) }
        return members
    }

    /// The outcome as one JSON object.
    package var json: JSONValue { .object(jsonMembers) }

    /// The outcome as JSON text, the shape of `process --report` and of the payload's `richpush` member
    /// (`Samples/schemas/outcome.schema.json`).
    public var jsonText: String { json.text }

    /// The object added to the payload under the top-level key `richpush`: the whole outcome.
    package var payloadSummary: JSONValue { json }

    /// Whether the notification shows as the payload intends: its verdict does (attached or
    /// no-attachment), and no content extension would crash on it or is misconfigured for it.
    public var showsAsIntended: Bool {
        guard verdict.showsAsIntended else { return false }
        switch contentExtension?.outcome {
        case .wouldCrash?, .configurationError?: return false
        case .shows?, .default?, nil: return true
        }
    }

    /// One line for people: `attached: public.jpeg, 4207 bytes, 52 ms` or `fallback [reason]: message`;
    /// a payload whose content extension would crash says that first (`would-crash [missing-key]: ...`).
    public var summaryLine: String {
        let time =
            elapsedMilliseconds >= 1000
            ? String(format: "%.1f s", elapsedMilliseconds / 1000) : String(format: "%.0f ms", elapsedMilliseconds)
        var line: String
        if verdict.showsAsIntended, !showsAsIntended, let view = contentExtension {
            line = "\(view.outcome.rawValue) [\(view.reason ?? "")]: \(view.message)"
            if let hint = view.hint { line += " Hint: \(hint)" }
            line += " (the verdict alone is \(verdict.rawValue), in \(time))"
        } else if verdict == .attached, let attachment {
            line = "attached: \(attachment.uti), \(attachment.bytes) bytes, \(time)"
            if let file = attachment.file { line += " -> \(file)" }
        } else {
            line = "\(verdict.rawValue) [\(reason.rawValue)]: \(message)"
            if let hint { line += " Hint: \(hint)" }
        }
        if let sdk, verdict == .attached { line += "\n  \(sdk): \(message)" }
        if let delivered, !delivered.changes.isEmpty {
            line += "\n  delivered: \(delivered.content), " + delivered.changes.joined(separator: "; ")
        }
        for warning in warnings { line += "\n  warning [\(warning.code)]: \(warning.message)" }
        return line
    }
}
