import RichPush

/// The payload reader and the mutated payload's writer.
///
/// - Parsing never crashes; what it accepts encodes to JSON that parses to the same value, and
///   encoding that value again gives the same text.
/// - The inspection sees the same tree as the parser, and rejects exactly what the parser rejects.
/// - The mutated payload (the original text plus a `richpush` member, as ``ServiceExtension`` writes
///   it) is valid JSON: the original members unchanged and in order, then `richpush`, and the
///   original bytes kept on both sides of the insertion.
enum PayloadInvariants {
    static func check(_ bytes: [UInt8]) {
        let parsed = try? JSONValue.parse(bytes)
        if let parsed { checkRoundTrip(parsed) }
        let inspection = PayloadInspector.inspect(bytes)
        let outcome: Outcome
        let root: JSONValue?
        switch inspection {
        case .decided(let decided, let decidedRoot):
            outcome = decided
            root = decidedRoot
            if parsed == nil {
                require(decided.verdict == .rejected, "unparseable bytes got the verdict \(decided.verdict)")
            }
        case .media(let items, let attachmentRoot, let warnings):
            require(items.count == 1, "Braze's extension read \(items.count) items")
            let url = items.first?.url ?? ""
            let declaredType = items.first?.declared ?? ""
            var attached = Outcome(
                verdict: .attached, reason: .ok, message: "attached \(url) as \(declaredType)",
                payloadBytes: bytes.count)
            attached.url = url
            attached.declaredType = declaredType
            attached.warnings = warnings
            outcome = attached
            root = attachmentRoot
        }
        if let root {
            require(root == parsed, "the inspection's tree differs from the parser's")
            checkWriter(original: bytes, root: root, summary: outcome.payloadSummary)
        }
    }

    static func checkRoundTrip(_ value: JSONValue) {
        let text = value.text
        guard let again = try? JSONValue.parse(Array(text.utf8)) else {
            require(false, "the encoded value is not JSON: \(text.prefix(200))")
            return
        }
        require(again == value, "decode -> encode -> decode changed the value: \(text.prefix(200))")
        require(again.text == text, "encoding the value twice gave two texts: \(text.prefix(200))")
    }

    /// The writer keeps the original members and bytes, and adds `richpush` last.
    static func checkWriter(original: [UInt8], root: JSONValue, summary: JSONValue) {
        guard case .object(let members) = root else { return }
        let mutated = PayloadText.inserting(key: "richpush", value: summary, into: original, isEmpty: members.isEmpty)
        guard case .object(let written)? = try? JSONValue.parse(mutated) else {
            require(
                false,
                "the mutated payload is not a JSON object: \(String(decoding: mutated.prefix(200), as: UTF8.self))")
            return
        }
        require(
            written.count == members.count + 1,
            "the mutated payload has \(written.count) members, not \(members.count + 1)")
        for (index, member) in members.enumerated() {
            require(
                written[index].key == member.key && written[index].value == member.value,
                "the mutated payload changed the member '\(member.key)' at position \(index)")
        }
        require(written.last?.key == "richpush", "the added member is not last")
        require(written.last?.value == summary, "the added member's value differs from the summary")
        // Byte for byte: everything before the closing brace, and from it on.
        guard let brace = original.lastIndex(of: UInt8(ascii: "}")) else {
            require(false, "an object's text without a closing brace")
            return
        }
        require(mutated.starts(with: original[..<brace]), "the bytes before the insertion changed")
        require(
            mutated.suffix(original.count - brace).elementsEqual(original[brace...]),
            "the bytes after the insertion changed")
    }
}
