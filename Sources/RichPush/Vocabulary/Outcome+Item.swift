extension Outcome {
    /// One media item of an SDK that takes several: its download, the name the SDK gave it, and what iOS did.
    ///
    /// JSON (each element of the outcome's `attachments`): `{"id": "hero", "url": "...", "verdict":
    /// "attached", "reason": "ok", "message": "...", "sdk_file": {...}, "attachment": {...}, "download": {...}}`.
    public struct Item: Sendable, Decodable, Equatable {
        public var id: String?
        public var url: String
        public var verdict: Verdict
        public var reason: ReasonCode
        public var message: String
        package var sdkFile: Naming?
        public var attachment: Attachment?
        public var download: Download?
        package var sniff: Sniff?

        enum CodingKeys: String, CodingKey {
            case id, url, verdict, reason, message
            case sdkFile = "sdk_file"
            case attachment, download, sniff
        }

        /// The item as its outcome reports it.
        public init(id: String?, url: String, outcome: Outcome) {
            self.id = id
            self.url = url
            verdict = outcome.verdict
            reason = outcome.reason
            message = outcome.message
            sdkFile = outcome.sdkFile
            attachment = outcome.attachment
            download = outcome.download
            sniff = outcome.sniff
        }

        package var json: JSONValue {
            var members: [(key: String, value: JSONValue)] = []
            if let id { members.append((CodingKeys.id.rawValue, .string(id))) }
            members += [
                (CodingKeys.url.rawValue, .string(url)),
                (CodingKeys.verdict.rawValue, .string(verdict.rawValue)),
                (CodingKeys.reason.rawValue, .string(reason.rawValue)),
                (CodingKeys.message.rawValue, .string(message)),
            ]
            if let sdkFile { members.append((CodingKeys.sdkFile.rawValue, sdkFile.json)) }
            if let attachment { members.append((CodingKeys.attachment.rawValue, attachment.json)) }
            if let download { members.append((CodingKeys.download.rawValue, download.json)) }
            if let sniff { members.append((CodingKeys.sniff.rawValue, sniff.json)) }
            return .object(members)
        }
    }
}
