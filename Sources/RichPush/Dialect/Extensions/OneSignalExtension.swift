import Foundation

/// OneSignal's extension (`OneSignal/OneSignal-iOS-SDK` 5.0.2, commit `00a9990`), as it reads a
/// payload's media. Citations are relative to `iOS_SDK/OneSignalSDK/`; every rule is in `docs/sdks.md`.
///
/// 1. `OneSignalNotificationServiceExtensionHandler.m@00a9990:L56-L57,L92-L105`: the collapse id is
///    copied into `os_data` when it is present, else into `custom`; a value that is not a dictionary
///    makes `dictionaryWithDictionary:` raise, and the extension dies.
/// 2. `OSNotification.m@00a9990:L46-L69,L84-L106`: when `os_data` is a dictionary only `os_data.att`
///    is read; otherwise the top-level `att`. (The minified `at` is read only for a push without
///    `aps.alert`, which never reaches an extension.)
/// 3. `OneSignalAttachmentHandler.m@00a9990:L206-L212`: no `att`, no media; `att` is walked with
///    `for (key in att)`: a dictionary by key (hash order: richpush keeps payload order), an empty
///    array not at all, anything else raises.
/// 4. `OneSignalAttachmentHandler.m@00a9990:L212,L309-L314`: each value is trimmed of spaces and tabs
///    (not newlines); a value that is not a string raises, and nothing at all is attached.
enum OneSignalExtension {
    static func read(_ root: JSONValue) -> MediaReading {
        if let osData = root["os_data"] {
            guard case .object = osData else {
                return .raises(
                    "'os_data' is \(osData.typeName), not a dictionary: OneSignal copies it to add the collapse id "
                        + "and raises, so the extension dies and iOS shows the notification as sent.", item: nil)
            }
        } else if let custom = root["custom"], !custom.isObject {
            return .raises(
                "'custom' is \(custom.typeName), not a dictionary: OneSignal copies it to add the collapse id and "
                    + "raises, so the extension dies and iOS shows the notification as sent.", item: nil)
        }
        let key: String
        let value: JSONValue?
        if let osData = root["os_data"] {
            key = "os_data.att"
            value = osData["att"]
            if value == nil, root["att"] != nil {
                return .none(
                    "'os_data' is a dictionary, so OneSignal reads only 'os_data.att', and the payload has none",
                    hint: "move 'att' into 'os_data': with an 'os_data' dictionary the top-level 'att' is never read.")
            }
        } else {
            key = "att"
            value = root["att"]
        }
        guard let value else {
            return .none("the payload has no '\(key)', the key OneSignal's extension reads", hint: nil)
        }
        let members: [(key: String, value: JSONValue)]
        switch value {
        case .object(let pairs): members = pairs
        case .array(let elements) where elements.isEmpty:
            return .none("'\(key)' is an empty array: OneSignal's loop attaches nothing", hint: nil)
        default:
            return .raises(
                "'\(key)' is \(value.typeName), not a dictionary of {id: url}: OneSignal's loop over it raises, so the "
                    + "extension dies and iOS shows the notification as sent.", item: nil)
        }
        var items: [MediaItem] = []
        var warnings: [Warning] = []
        for member in members {
            guard case .string(let text) = member.value else {
                return .raises(
                    "'\(key).\(member.key)' is \(member.value.typeName), not a string: OneSignal trims every value as a "
                        + "string and raises on this one, so the extension dies and nothing is attached (iOS shows the "
                        + "notification as sent).", item: nil)
            }
            // `[NSCharacterSet whitespaceCharacterSet]`: spaces and tabs (Unicode Zs), not newlines.
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed != text {
                warnings.append(
                    Warning(
                        "url-trimmed",
                        "'\(key).\(member.key)' has spaces or tabs around the URL; OneSignal trims them, other SDKs "
                            + "do not: remove them."))
            }
            items.append(MediaItem(id: member.key, url: trimmed))
        }
        guard !items.isEmpty else {
            return .none("'\(key)' is an empty dictionary: OneSignal attaches nothing", hint: nil)
        }
        return .items(items, warnings: warnings)
    }

    /// `supportedFileExtension` (`OneSignalAttachmentHandler.m@00a9990:L393-L425`,
    /// `NSString+OneSignal.m@00a9990:L69-L80`, `NSURL+OneSignal.m@00a9990:L32-L61`): the first
    /// `filename` query item split on dots (two parts or more, the last on the list); the MIME map;
    /// the URL's path extension; then the query items from last to first, each value's dot-separated
    /// parts from last to first, the first part on the list winning (no dot needed). All exact and
    /// case-sensitive against the lower-case list.
    static func name(
        _ input: NamingInput, dialect: Dialect, mime: String?, mimeText: String, map: [String: String], stand: String
    )
        -> Naming
    {
        let query = URLQuery.items(of: input.url)
        func named(_ suffix: String, rule: String, from: String) -> Naming {
            Naming(name: stand + "." + suffix, fileExtension: suffix, rule: rule, from: from)
        }
        if let filename = query.first(where: { $0.name == "filename" })?.value {
            let parts = filename.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            if parts.count >= 2, let last = parts.last, dialect.accepts(last) {
                return named(last, rule: "query-filename", from: "?filename=\(filename)")
            }
        }
        if let mime, let suffix = map[mime] {
            return named(suffix, rule: "content-type", from: mimeText)
        }
        let component = SuggestedFilename.lastPathComponent(input.url) ?? ""
        if let suffix = SuggestedFilename.pathExtension(component), dialect.accepts(suffix) {
            return named(suffix, rule: "url-path", from: "the URL's path extension '.\(suffix)'")
        }
        for item in query.reversed() {
            guard let value = item.value else { continue }
            for part in value.split(separator: ".", omittingEmptySubsequences: false).reversed()
            where dialect.accepts(String(part)) {
                return named(String(part), rule: "query-item", from: "?\(item.name)=\(value)")
            }
        }
        let pathSuffix = SuggestedFilename.pathExtension(component)
        let caseNote =
            pathSuffix.map { suffix in
                dialect.accepts(suffix.lowercased()) && !dialect.accepts(suffix)
                    ? " ('.\(suffix)' is on its list only in lower case: OneSignal matches case-sensitively)" : ""
            } ?? ""
        return Naming(
            name: nil, fileExtension: nil, rule: "none", from: mimeText,
            skipped: "OneSignal found no supported extension in ?filename=, \(mimeText), the URL path or the query"
                + caseNote + "; it skips the attachment")
    }
}

extension JSONValue {
    var isObject: Bool {
        if case .object = self { return true }
        return false
    }
}
