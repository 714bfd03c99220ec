/// What the user sees: the notification as sent, or the SDK's copy with what it changed.
///
/// JSON (the outcome's `delivered`): `{"content": "best-attempt", "title": "...", "body": "...",
/// "attachments": 0, "changes": ["category named after itbl.messageId, with its action buttons"]}`.
/// `content` is `original` (as sent), `composed` (the SDK's content with its media), `best-attempt`
/// (the SDK's copy without media) or `nothing` (APNs refuses the payload).
package struct DeliveredContent: Sendable, Decodable, Equatable {
    package var content: String
    package var title: String?
    package var subtitle: String?
    package var body: String?
    /// Attachments iOS shows (the first is the thumbnail).
    package var attachments: Int
    /// What the SDK changed from the content as sent.
    package var changes: [String]

    package var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("content", .string(content))]
        if let title { members.append(("title", .string(title))) }
        if let subtitle { members.append(("subtitle", .string(subtitle))) }
        if let body { members.append(("body", .string(body))) }
        members.append(("attachments", .number(String(attachments))))
        members.append(("changes", .array(changes.map { .string($0) })))
        return .object(members)
    }
}

extension Dialect {
    /// What the user sees for an outcome of `verdict` with `attached` attachments, from payload `root`.
    /// `reason` refines it: an extension that raised (``ReasonCode/extensionRaised``) delivers nothing
    /// of its own, so iOS shows the push as sent; a valid media payload without media (Airship) still
    /// applies its text.
    package func delivered(_ verdict: Verdict, attached: Int, root: JSONValue?, reason: ReasonCode? = nil)
        -> DeliveredContent
    {
        guard verdict != .rejected, let root else {
            return DeliveredContent(content: "nothing", attachments: 0, changes: [])
        }
        let alert = root.at(["aps", "alert"])
        var title: String?
        var subtitle: String?
        var body: String?
        if case .string(let text)? = alert {
            body = text
        } else {
            title = alert?.string(at: ["title"])
            subtitle = alert?.string(at: ["subtitle"])
            body = alert?.string(at: ["body"])
        }
        let original = DeliveredContent(
            content: "original", title: title, subtitle: subtitle, body: body, attachments: 0, changes: [])
        if reason == .extensionRaised { return original }
        let mode: Delivery
        switch verdict {
        case .noAttachment where textOverrides != nil && textOverrides?.appliesWithoutMedia == true:
            guard case .items(let items, _) = readMedia(root), items.isEmpty else { return original }
            mode = .bestAttempt
        case .rejected, .notInvoked, .noAttachment: return original
        case .attached: mode = .bestAttempt
        case .fallback: mode = onFailure
        case .expired: mode = onExpiry
        }
        switch mode {
        case .original, .appMustHandle: return original
        case .composedIfReady where verdict != .attached: return original
        case .bestAttempt, .composedIfReady: break
        }
        var copy = original
        copy.content = verdict == .attached ? "composed" : "best-attempt"
        copy.attachments = verdict == .attached ? attached : 0
        for change in bestAttemptChanges
        where change.keys.contains(where: { root.has($0) }) {
            copy.changes.append(change.what)
        }
        if let overrides = textOverrides,
            verdict == .attached || (verdict == .fallback && overrides.keptOnFailure)
                || (verdict == .noAttachment && overrides.appliesWithoutMedia)
        {
            if let text = root.string(at: overrides.title) {
                copy.title = text
                copy.changes.append("title from '\(Self.dotted(overrides.title))'")
            }
            if let path = overrides.subtitle, let text = root.string(at: path) {
                copy.subtitle = text
                copy.changes.append("subtitle from '\(Self.dotted(path))'")
            }
            if let text = root.string(at: overrides.body) {
                copy.body = text
                copy.changes.append("body from '\(Self.dotted(overrides.body))'")
            }
        }
        if copy.changes.isEmpty && copy.attachments == 0 {
            copy.content = verdict == .attached ? "composed" : "best-attempt"
        }
        return copy
    }
}
