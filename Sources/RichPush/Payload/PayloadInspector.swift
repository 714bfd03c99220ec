/// What a payload asks of the extension, or the verdict it gets before any download.
public enum Inspection: Sendable {
    /// Decided without downloading: rejected, not invoked, no attachment, or a malformed request.
    case decided(Outcome, root: JSONValue?)
    /// An attachment to download: the URL, the declared type as written, and the format iOS will assume.
    case attachment(url: String, declaredType: String, format: AttachmentFormat, root: JSONValue, warnings: [Warning])
}

/// Stages 1 to 3: is it a payload APNs accepts, would iOS run the extension, what does Braze's `ab.att` ask for.
///
/// Everything outside `aps.alert`, `aps.mutable-content` and `ab.att` is opaque and untouched.
public enum PayloadInspector {
    /// The `type` values Braze's REST API lets a campaign send.
    public static let brazeAPITypes: Set<String> = ["aif", "gif", "jpg", "m4a", "mp3", "mp4", "png", "wav"]

    public static func inspect(_ bytes: [UInt8], pushType: ExtensionPolicy.PushType = .alert) -> Inspection {
        switch envelope(bytes, pushType: pushType) {
        case .decided(let inspection):
            return inspection
        case .payload(let root, let size, let warnings):
            let inspection = read(root, size: size, pushType: pushType)
            return prepending(warnings, to: inspection)
        }
    }

    /// A payload read as far as every SDK reads it: APNs' size, JSON, an object with an `aps` dictionary.
    enum Envelope {
        case decided(Inspection)
        case payload(root: JSONValue, size: Int, warnings: [Warning])
    }

    /// `inspection` with `warnings` first.
    static func prepending(_ warnings: [Warning], to inspection: Inspection) -> Inspection {
        guard !warnings.isEmpty else { return inspection }
        switch inspection {
        case .decided(var outcome, let root):
            outcome.warnings = warnings + outcome.warnings
            return .decided(outcome, root: root)
        case .attachment(let url, let declaredType, let format, let root, let more):
            return .attachment(
                url: url, declaredType: declaredType, format: format, root: root, warnings: warnings + more)
        }
    }

    /// Stage 1 for every dialect: APNs' rules and the payload's shape, up to a readable `aps`.
    static func envelope(_ bytes: [UInt8], pushType: ExtensionPolicy.PushType) -> Envelope {
        // APNs counts the JSON it is sent; the newline (or other JSON whitespace) a file or `echo`
        // adds after it is not part of the payload.
        let size = bytes.count - bytes.reversed().prefix(while: { [0x20, 0x0A, 0x0D, 0x09].contains($0) }).count
        func decided(_ verdict: Verdict, _ reason: ReasonCode, _ message: String) -> Envelope {
            .decided(
                .decided(Outcome(verdict: verdict, reason: reason, message: message, payloadBytes: size), root: nil))
        }
        // 1. Read: APNs' rules.
        let limit = pushType.maxPayloadBytes
        var warnings: [Warning] = []
        if size > limit {
            // Braze builds the JSON it sends, compact; only the sender's own whitespace is over the limit.
            let compact = compactSize(bytes)
            guard compact <= limit else {
                let compactNote = compact < size ? " (\(compact) as compact JSON, which is what APNs counts)" : ""
                return decided(
                    .rejected, .payloadTooLarge,
                    "the payload is \(size) bytes\(compactNote); APNs refuses \(pushType.rawValue) pushes over "
                        + "\(limit) bytes. Shorten the text or move data behind a URL.")
            }
            warnings.append(
                Warning(
                    "payload-whitespace-over-limit",
                    "the payload is \(size) bytes as written but \(compact) as compact JSON, under APNs' \(limit)-byte "
                        + "limit for \(pushType.rawValue) pushes: Braze sends compact JSON, so the device gets it. A "
                        + "sender that transmits the text as written is refused by APNs: send it compact."))
        }
        let root: JSONValue
        do {
            root = try JSONValue.parse(bytes)
        } catch {
            return decided(.rejected, .invalidJSON, Self.invalidJSONMessage(bytes, error: "\(error)"))
        }
        warnings += duplicateKeyWarnings(root)
        if let shape = shape(root, size: size) { return .decided(prepending(warnings, to: shape)) }
        return .payload(root: root, size: size, warnings: warnings)
    }

    /// Stage 1's last rules: an object with an `aps` dictionary; nil when the payload has them.
    private static func shape(_ root: JSONValue, size: Int) -> Inspection? {
        func decided(_ reason: ReasonCode, _ message: String, hint: String? = nil, root: JSONValue? = nil) -> Inspection
        {
            .decided(
                Outcome(verdict: .rejected, reason: reason, message: message, hint: hint, payloadBytes: size),
                root: root)
        }
        guard case .object = root else {
            return decided(.notAnObject, "the payload is \(root.typeName), not a JSON object; APNs needs an object.")
        }
        guard let aps = root["aps"] else {
            let stray = ["alert", "mutable-content", "badge", "sound"].filter { root[$0] != nil }
            return decided(
                .apsMissing, "the payload has no 'aps' dictionary; APNs needs one.",
                hint: stray.isEmpty ? nil : "\(stray.joined(separator: ", ")) must go inside 'aps'.", root: root)
        }
        guard case .object = aps else {
            return decided(.apsNotAnObject, "'aps' is \(aps.typeName); APNs needs a dictionary.", root: root)
        }
        return nil
    }

    /// Stages 1 (the JSON's shape) to 3 for a parsed payload of `size` bytes.
    private static func read(_ root: JSONValue, size: Int, pushType: ExtensionPolicy.PushType) -> Inspection {
        func decided(
            _ verdict: Verdict, _ reason: ReasonCode, _ message: String, hint: String? = nil, root: JSONValue? = nil
        ) -> Inspection {
            .decided(
                Outcome(verdict: verdict, reason: reason, message: message, hint: hint, payloadBytes: size), root: root)
        }
        // The envelope checked the shape: an object with an `aps` dictionary.
        let aps = root["aps"] ?? .object([])
        // A payload that asks for no attachment shows as intended whether or not the extension runs.
        guard case .object = root["ab"], let att = root["ab"]?["att"] else {
            return decided(
                .noAttachment, .noAttachmentRequested, "the payload asks for no attachment (no 'ab.att').",
                hint: root["att"] != nil ? "'att' is at the top level; Braze reads it from inside 'ab'." : nil,
                root: root)
        }
        // 2. Would iOS run the extension?
        if let decision = invocation(aps: aps, root: root, size: size, pushType: pushType) {
            return .decided(decision, root: root)
        }
        // 3. Braze's attachment request.
        guard case .object = att else {
            return decided(
                .fallback, .attachmentNotAnObject,
                "'ab.att' is \(att.typeName), not an object with 'url' and 'type'; the plain notification shows.",
                root: root)
        }
        guard let urlValue = att["url"] else {
            return decided(
                .fallback, .attachmentURLMissing, "'ab.att' has no 'url'; the plain notification shows.", root: root)
        }
        guard case .string(let url) = urlValue else {
            return decided(
                .fallback, .attachmentURLNotAString, "'ab.att.url' is \(urlValue.typeName), not a string.", root: root)
        }
        guard let typeValue = att["type"] else {
            return decided(
                .fallback, .attachmentTypeMissing,
                "'ab.att' has no 'type'; the extension cannot name the file, so iOS cannot attach it.", root: root)
        }
        guard case .string(let declared) = typeValue else {
            return decided(
                .fallback, .attachmentTypeNotAString, "'ab.att.type' is \(typeValue.typeName), not a string.",
                root: root)
        }
        let normalized = AttachmentFormat.normalizedExtension(declared)
        guard let format = AttachmentFormat.forExtension(declared) else {
            let accepted = AttachmentFormat.all.flatMap(\.extensions).joined(separator: ", ")
            return .decided(
                withRequest(
                    Outcome(
                        verdict: .fallback, reason: .unsupportedType,
                        message:
                            "'ab.att.type' is '\(declared)', which is not a file extension iOS can attach "
                            + "(UNError 101). Use one of: \(accepted).",
                        hint: declared.contains("/") || declared.contains("..")
                            ? "a type is a file extension, never a path; richpush never builds a path from it." : nil,
                        payloadBytes: size), url: url, declared: declared), root: root)
        }
        var warnings: [Warning] = []
        if normalized != declared {
            warnings.append(
                Warning(
                    "type-normalized",
                    "'ab.att.type' is '\(declared)'; read as '\(normalized)'. Braze's API sends lower case without a dot."
                ))
        }
        if !brazeAPITypes.contains(normalized) {
            warnings.append(
                Warning(
                    "type-outside-braze-api",
                    "'\(normalized)' works on iOS, but Braze campaigns can only send "
                        + brazeAPITypes.sorted().joined(separator: ", ") + "."))
        }
        return .attachment(url: url, declaredType: declared, format: format, root: root, warnings: warnings)
    }

    /// Attaches the request's URL and type to an outcome decided from them.
    static func withRequest(_ outcome: Outcome, url: String, declared: String) -> Outcome {
        var outcome = outcome
        outcome.url = url
        outcome.declaredType = declared
        return outcome
    }

    /// iOS runs a service extension only for an alert push with `aps.mutable-content` equal to 1.
    /// Any other push type never reaches the extension, whatever its payload says.
    static func invocation(aps: JSONValue, root: JSONValue, size: Int, pushType: ExtensionPolicy.PushType)
        -> Outcome?
    {
        func notInvoked(_ reason: ReasonCode, _ message: String, hint: String? = nil) -> Outcome {
            Outcome(verdict: .notInvoked, reason: reason, message: message, hint: hint, payloadBytes: size)
        }
        guard pushType.runsServiceExtension else {
            return notInvoked(
                .noAlert,
                "this is a \(pushType.rawValue) push (apns-push-type: \(pushType.rawValue)): iOS runs service "
                    + "extensions only for alert pushes, whatever the payload says, so no attachment shows.",
                hint: "send it with apns-push-type alert (--push-type alert) to have the extension attach the asset.")
        }
        switch aps["mutable-content"] {
        case .none:
            var hint: String?
            if aps["mutable_content"] != nil || aps["mutableContent"] != nil {
                hint = "the key is spelled with an underscore or in camel case; APNs reads 'mutable-content'."
            } else if root["mutable-content"] != nil {
                hint = "'mutable-content' is at the top level; it must be inside 'aps'."
            }
            return notInvoked(
                .mutableContentMissing,
                "'aps' has no 'mutable-content': iOS does not run the service extension, so no attachment shows. "
                    + "Add \"mutable-content\": 1 to 'aps'.", hint: hint)
        case .number(let text) where Double(text) == 1:
            break
        case .some(let other):
            var hint: String?
            if case .string = other {
                hint = "it is a string; APNs wants the number 1, not \"1\"."
            } else if case .bool = other {
                hint = "it is a boolean; APNs documents the number 1."
            }
            return notInvoked(
                .mutableContentNotOne,
                "'aps.mutable-content' is \(other.text), not 1: iOS does not run the service extension.", hint: hint)
        }
        let alert = aps["alert"]
        let hasAlert: Bool
        switch alert {
        case .string(let text): hasAlert = !text.isEmpty
        case .object(let members): hasAlert = !members.isEmpty
        default: hasAlert = false
        }
        guard hasAlert else {
            let kind = aps["content-available"] != nil ? "a silent (content-available) push" : "a push without an alert"
            return notInvoked(
                .noAlert,
                "this is \(kind): iOS runs service extensions only for pushes that show an alert. "
                    + "Add an 'alert' to 'aps'.")
        }
        return nil
    }

    /// The payload's size as compact JSON: every space, tab, line feed and carriage return outside a
    /// string removed (RFC 8259's insignificant whitespace). Strings and everything else are counted as written.
    static func compactSize(_ bytes: [UInt8]) -> Int {
        var count = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                count += 1
            } else if ![0x20, 0x0A, 0x0D, 0x09].contains(byte) {
                if byte == UInt8(ascii: "\"") { inString = true }
                count += 1
            }
        }
        return count
    }

    /// The most duplicate-key warnings one payload gets (a hostile payload can repeat keys at will).
    static let maxDuplicateKeyWarnings = 5

    /// A warning for each key that appears more than once in an object, anywhere in the payload, naming
    /// the value the device sees: the app reads the payload as `userInfo`, a dictionary decoded by
    /// JSONSerialization, which keeps the last of the repeated members (measured on this toolchain's
    /// Foundation; richpush's own reading, ``JSONValue/subscript(_:)``, agrees).
    static func duplicateKeyWarnings(_ root: JSONValue) -> [Warning] {
        var warnings: [Warning] = []
        func visit(_ value: JSONValue, path: String) {
            guard warnings.count < maxDuplicateKeyWarnings else { return }
            switch value {
            case .object(let members):
                var counts: [String: Int] = [:]
                for member in members { counts[member.key, default: 0] += 1 }
                var reported: Set<String> = []
                for member in members where (counts[member.key] ?? 0) > 1 && !reported.contains(member.key) {
                    guard warnings.count < maxDuplicateKeyWarnings, let last = value[member.key] else { break }
                    reported.insert(member.key)
                    var seen = last.text
                    if seen.count > 80 { seen = String(seen.prefix(77)) + "..." }
                    let name = path.isEmpty ? member.key : path + "." + member.key
                    warnings.append(
                        Warning(
                            "duplicate-key",
                            "'\(name)' appears \(counts[member.key] ?? 0) times; the device's JSONSerialization keeps "
                                + "the last, so the app sees \(seen). Remove the other occurrences."))
                }
                for member in members { visit(member.value, path: path.isEmpty ? member.key : path + "." + member.key) }
            case .array(let items):
                for (index, item) in items.enumerated() { visit(item, path: path + "[\(index)]") }
            default: break
            }
        }
        visit(root, path: "")
        return warnings
    }

    /// Why the payload is not JSON, with the two mistakes a sender can fix at once named: a UTF-8 byte
    /// order mark (JSON text must not start with one, RFC 8259 section 8.1; richpush reads no further) and
    /// several payloads in one file (NDJSON, which `richpush batch` reads one line at a time).
    static func invalidJSONMessage(_ bytes: [UInt8], error: String) -> String {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            return "the payload starts with a UTF-8 byte order mark (bytes EF BB BF), which JSON text must not "
                + "have (RFC 8259): senders transmit JSON without one. Save the file as UTF-8 without a BOM."
        }
        let lines = bytes.split(separator: UInt8(ascii: "\n")).filter { line in
            line.contains { ![0x20, 0x09, 0x0D].contains($0) }
        }
        if lines.count > 1, lines.allSatisfy({ (try? JSONValue.parse(Array($0))) != nil }) {
            return "the payload is \(lines.count) JSON documents, one per line (NDJSON), not one: process reads one "
                + "payload. Run 'richpush batch FILE.ndjson' to process each line."
        }
        return "the payload is not valid JSON: \(error). Fix the JSON text."
    }
}
