/// What a payload asks of the extension, or the verdict it gets before any download.
package enum Inspection: Sendable {
    /// Decided without downloading: rejected, not invoked, no attachment, or a malformed request.
    case decided(Outcome, root: JSONValue?)
    /// Media to download: the items the SDK's extension reads, in payload order, and the warnings so far.
    case media([MediaItem], root: JSONValue, warnings: [Warning])
}

/// Stages 1 to 3 for every SDK: is it a payload APNs accepts, would iOS run the extension, what does the
/// SDK's extension (``Dialect/readMedia(_:)``) ask for.
///
/// Everything outside `aps.alert`, `aps.mutable-content` and the SDK's own keys is opaque and untouched.
package enum PayloadInspector {
    /// The `type` values Braze's REST API lets a campaign send.
    package static var brazeAPITypes: Set<String> { BrazeExtension.apiTypes }

    /// The payload as `dialect`'s extension reads it (Braze's by default).
    package static func inspect(
        _ bytes: [UInt8], pushType: ExtensionPolicy.PushType = .alert, dialect: Dialect = .braze
    )
        -> Inspection
    {
        switch envelope(bytes, pushType: pushType) {
        case .decided(let outcome, let root):
            return .decided(outcome, root: root)
        case .payload(let root, let size, let warnings):
            return prepending(warnings, to: read(root, size: size, pushType: pushType, dialect: dialect))
        }
    }

    /// A payload read as far as every SDK reads it: APNs' size, JSON, an object with an `aps` dictionary.
    enum Envelope {
        case decided(Outcome, root: JSONValue?)
        case payload(root: JSONValue, size: Int, warnings: [Warning])
    }

    /// `inspection` with `warnings` first.
    static func prepending(_ warnings: [Warning], to inspection: Inspection) -> Inspection {
        guard !warnings.isEmpty else { return inspection }
        switch inspection {
        case .decided(var outcome, let root):
            outcome.warnings = warnings + outcome.warnings
            return .decided(outcome, root: root)
        case .media(let items, let root, let more):
            return .media(items, root: root, warnings: warnings + more)
        }
    }

    /// Stages 2 and 3 for a payload with an `aps` dictionary: the SDK's reading, and whether iOS runs
    /// the extension. A payload that asks for no media shows as intended whether or not it runs.
    static func read(_ root: JSONValue, size: Int, pushType: ExtensionPolicy.PushType, dialect: Dialect)
        -> Inspection
    {
        func decided(
            _ verdict: Verdict, _ reason: ReasonCode, _ message: String, hint: String?, item: MediaItem? = nil
        ) -> Inspection {
            var outcome = Outcome(verdict: verdict, reason: reason, message: message, hint: hint, payloadBytes: size)
            outcome.url = item?.url
            outcome.declaredType = item?.declared
            return .decided(outcome, root: root)
        }
        let reading = dialect.readMedia(root)
        if case .none(let why, let hint) = reading {
            var outcome = Outcome(
                verdict: .noAttachment, reason: .noAttachmentRequested,
                message: "the payload asks \(dialect.title)'s extension for no attachment: \(why).", hint: hint,
                payloadBytes: size)
            if let other = otherSDK(root, reading: dialect) {
                outcome.warnings.append(other.warning)
                outcome.hint = other.hint + (outcome.hint.map { " If it is for \(dialect.title): " + $0 } ?? "")
            }
            return .decided(outcome, root: root)
        }
        // 2. Would iOS run the extension?
        if let decision = invocation(aps: root["aps"] ?? .object([]), root: root, size: size, pushType: pushType) {
            return .decided(decision, root: root)
        }
        // 3. The SDK's media request.
        switch reading {
        case .none(let why, let hint):
            return decided(.noAttachment, .noAttachmentRequested, why, hint: hint)
        case .refused(let reason, let message, let hint, let item):
            return decided(.fallback, reason, message, hint: hint, item: item)
        case .raises(let message, let item):
            return decided(.fallback, .extensionRaised, message, hint: nil, item: item)
        case .items(let items, let warnings):
            return .media(items, root: root, warnings: warnings)
        }
    }

    /// When `dialect` reads no media from `root` but another SDK's keys are there: a warning and a
    /// hint naming that SDK, so a run without `--sdk` (Braze's extension) is not a false green.
    static func otherSDK(_ root: JSONValue, reading dialect: Dialect) -> (warning: Warning, hint: String)? {
        let detected = DialectDetection.detect(root)
        guard detected != dialect, detected != .braze else { return nil }
        let keys = detected.markers.filter { root.has($0) }.map { "'\($0)'" }.joined(separator: ", ")
        return (
            Warning(
                "other-sdk-payload",
                "the payload carries \(detected.title)'s keys (\(keys)), which \(dialect.title)'s extension does not "
                    + "read: on a phone whose app uses \(dialect.title), no media shows."),
            "check it as \(detected.title)'s extension reads it: --sdk \(detected.name) (or --sdk auto)."
        )
    }

    /// Stage 1 for every dialect: APNs' rules and the payload's shape, up to a readable `aps`.
    static func envelope(_ bytes: [UInt8], pushType: ExtensionPolicy.PushType) -> Envelope {
        // APNs counts the JSON it is sent; the newline (or other JSON whitespace) a file or `echo`
        // adds after it is not part of the payload.
        let size = bytes.count - bytes.reversed().prefix(while: { [0x20, 0x0A, 0x0D, 0x09].contains($0) }).count
        func decided(_ verdict: Verdict, _ reason: ReasonCode, _ message: String) -> Envelope {
            .decided(Outcome(verdict: verdict, reason: reason, message: message, payloadBytes: size), root: nil)
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
        if var shape = shape(root, size: size) {
            shape.outcome.warnings = warnings + shape.outcome.warnings
            return .decided(shape.outcome, root: shape.root)
        }
        return .payload(root: root, size: size, warnings: warnings)
    }

    /// Stage 1's last rules: an object with an `aps` dictionary; nil when the payload has them.
    private static func shape(_ root: JSONValue, size: Int) -> (outcome: Outcome, root: JSONValue?)? {
        func decided(_ reason: ReasonCode, _ message: String, hint: String? = nil, root: JSONValue? = nil) -> (
            outcome: Outcome, root: JSONValue?
        ) {
            (Outcome(verdict: .rejected, reason: reason, message: message, hint: hint, payloadBytes: size), root)
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
        var strings = JSONStringTracker()
        for byte in bytes where strings.isInString(byte) || ![0x20, 0x0A, 0x0D, 0x09].contains(byte) {
            count += 1
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
