import Foundation

/// What a download's response says, for an SDK to name the file from.
package struct NamingInput: Sendable, Equatable {
    /// The URL as the payload gives it (what `url.pathExtension` and the query are read from).
    package var url: String
    /// The response's URL, after redirects (what `suggestedFilename` reads).
    package var responseURL: String
    package var contentType: String?
    package var contentDisposition: String?
    /// The payload's declared type or kind (`ab.att.type`, `rich-media-type`, `ct_mediaType`), as written.
    package var declared: String?
    /// The body's first bytes, for Airship's own byte table.
    package var head: [UInt8]

    package init(
        url: String, responseURL: String? = nil, contentType: String? = nil, contentDisposition: String? = nil,
        declared: String? = nil, head: [UInt8] = []
    ) {
        self.url = url
        self.responseURL = responseURL ?? url
        self.contentType = contentType
        self.contentDisposition = contentDisposition
        self.declared = declared
        self.head = head
    }
}

/// The file an SDK wrote for iOS: its name, the extension iOS reads, and which rule chose it.
///
/// JSON (the outcome's `sdk_file`): `{"name": "a1b2c3.png", "extension": "png", "rule": "content-type",
/// "from": "Content-Type: image/png"}`; `skipped` says why the SDK made no attachment at all.
package struct Naming: Sendable, Decodable, Equatable {
    /// The name the SDK gives the file (a random or temporary part shown as a short stand-in).
    package var name: String?
    /// The extension of ``name`` as written (case kept): what iOS maps to a type.
    package var fileExtension: String?
    /// Which rule decided: `declared-type`, `fixed`, `content-disposition`, `url-path`, `content-type`,
    /// `query-filename`, `query-item`, `type-hint`, `none`.
    package var rule: String
    /// The value the rule read, for people.
    package var from: String
    /// The type hint the SDK passes to `UNNotificationAttachment` (Airship, notifee), a UTI.
    package var typeHint: String?
    /// Why the SDK created no attachment (no extension, outside its allow-list, no name).
    package var skipped: String?

    enum CodingKeys: String, CodingKey {
        case name
        case fileExtension = "extension"
        case rule, from
        case typeHint = "type_hint"
        case skipped
    }

    package var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        if let name { members.append((CodingKeys.name.rawValue, .string(name))) }
        if let fileExtension { members.append((CodingKeys.fileExtension.rawValue, .string(fileExtension))) }
        members.append((CodingKeys.rule.rawValue, .string(rule)))
        members.append((CodingKeys.from.rawValue, .string(from)))
        if let typeHint { members.append((CodingKeys.typeHint.rawValue, .string(typeHint))) }
        if let skipped { members.append((CodingKeys.skipped.rawValue, .string(skipped))) }
        return .object(members)
    }

    /// The format iOS opens the file as: the one its extension names, else (inferred) the type hint's.
    package var iosFormat: AttachmentFormat? {
        if let fileExtension, let format = AttachmentFormat.forExtension(fileExtension) { return format }
        if let typeHint { return AttachmentFormat.all.first { $0.uti == typeHint } }
        return nil
    }
}

extension Dialect {
    /// How this SDK names the file for `input`; `stand` is the short stand-in for the SDK's random or
    /// temporary name part.
    package func name(_ input: NamingInput, stand: String = "tmp") -> Naming {
        func named(_ suffix: String, rule: String, from: String, base: String? = nil) -> Naming {
            Naming(name: (base ?? stand) + "." + suffix, fileExtension: suffix, rule: rule, from: from)
        }
        func none(_ why: String, from: String = "nothing") -> Naming {
            Naming(name: nil, fileExtension: nil, rule: "none", from: from, skipped: why)
        }
        let mime = SuggestedFilename.bareMIME(input.contentType)
        let mimeText = input.contentType.map { "Content-Type: \($0)" } ?? "no Content-Type"
        switch naming {
        case .declaredType:
            // Braze: the type as its API sends it (lower case, no dot); richpush reads a dot or capitals
            // the same way and says so (`type-normalized`).
            guard let declared = input.declared, !declared.isEmpty else {
                return none("\(title) appends the declared type, and there is none")
            }
            let suffix = AttachmentFormat.normalizedExtension(declared)
            guard !suffix.contains("/"), SuggestedFilename.pathExtension(stand + "." + suffix) == suffix else {
                return none(
                    "the declared type '\(declared)' is not a file extension (a type is never a path)",
                    from: "declared type '\(declared)'")
            }
            return named(suffix, rule: "declared-type", from: "declared type '\(declared)'")
        case .declaredTypeAsWritten:
            // Klaviyo: `"\(name).\(type)"`, the type as written: `.png` makes `name..png`, `PNG` stays `.PNG`.
            guard let declared = input.declared, !declared.isEmpty else {
                return none("\(title) appends the declared type, and there is none")
            }
            let name = stand + "." + declared
            if declared.contains("/") {
                return Naming(
                    name: name, fileExtension: nil, rule: "declared-type", from: "declared type '\(declared)'",
                    skipped: "\(title) appends '\(declared)' as written, and its '/' makes a path, not a name: the "
                        + "file cannot be written there, and no attachment is made")
            }
            guard let suffix = SuggestedFilename.pathExtension(name) else {
                return Naming(
                    name: name, fileExtension: nil, rule: "declared-type", from: "declared type '\(declared)'",
                    skipped: "the name '\(name)' has no extension, so iOS cannot type the file")
            }
            return Naming(name: name, fileExtension: suffix, rule: "declared-type", from: "declared type '\(declared)'")
        case .declaredKind(let map, let mimeFallback):
            if let declared = input.declared, let suffix = map[declared] {
                return named(suffix, rule: "declared-type", from: "declared kind '\(declared)'")
            }
            if let mime, let suffix = mimeFallback[mime] {
                return named(suffix, rule: "content-type", from: mimeText)
            }
            // CleverTap then appends "." and nothing: a file iOS cannot type.
            return Naming(
                name: stand + ".", fileExtension: nil, rule: "none", from: mimeText,
                skipped: "\(title) found no extension for kind '\(input.declared ?? "")' and \(mimeText), and names "
                    + "the file '\(stand).'")
        case .fixed(let suffix):
            return named(suffix, rule: "fixed", from: "its fixed rule (every file is .\(suffix))")
        case .suggestedFilename(let fallback, let required, let stem):
            let suggested = SuggestedFilename.of(
                url: input.responseURL, contentType: input.contentType, contentDisposition: input.contentDisposition)
            let source = suggested.source.hasPrefix("Content-Disposition") ? "content-disposition" : "url-path"
            // The name without an extension of its own: the stem alone, or the stem and the suggested name.
            let base: String
            switch stem {
            case .prefixed(let separator): base = stand + separator + suggested.name
            case .extensionOnly: base = stand
            }
            if let suffix = SuggestedFilename.pathExtension(suggested.name) {
                var naming = Naming(
                    name: stem == .extensionOnly ? stand + "." + suffix : base,
                    fileExtension: suffix, rule: source,
                    from: "suggestedFilename '\(suggested.name)' (\(suggested.source))")
                if suggested.source.contains("from Content-Type") { naming.rule = "content-type" }
                return naming
            }
            if required && suggested.name == "unknown" {
                return none("\(title) drops the image without a suggested filename")
            }
            // Firebase and notifee: a MIME type that contains `image/` has every `image/` replaced by `.`
            // and appended (`image/png` gives `.png`, `x-image/png` gives `x-.png`); Firebase refuses a
            // result with a `/` in it, notifee appends it unchecked.
            if let mime, mime.contains("image/"), fallback != .none {
                let appended = mime.replacingOccurrences(of: "image/", with: ".")
                let name = stand + appended
                let suffix = SuggestedFilename.pathExtension(name)
                let from = mimeText + " ('image/' replaced by '.')"
                switch fallback {
                case .none: break
                case .sanitised:
                    if !appended.contains("/"), let suffix {
                        return Naming(name: name, fileExtension: suffix, rule: "content-type", from: from)
                    }
                case .raw:
                    var naming = Naming(name: name, fileExtension: suffix, rule: "content-type", from: from)
                    if appended.contains("/") {
                        naming.fileExtension = nil
                        naming.skipped =
                            "\(title) appends '\(appended)' unsanitised, and its '/' makes a path, not a name: the "
                            + "file lands outside its folder or nowhere, and no attachment is made"
                    } else if suffix == nil {
                        naming.skipped = "the name '\(name)' has no extension, so iOS cannot type the file"
                    }
                    return naming
                }
            }
            return Naming(
                name: base, fileExtension: nil, rule: "none",
                from: "suggestedFilename '\(suggested.name)', \(mimeText)",
                skipped: "the name '\(suggested.name)' has no extension, so iOS cannot type the file")
        case .queryMIMEPath(let mimeMap):
            return OneSignalExtension.name(
                input, dialect: self, mime: mime, mimeText: mimeText, map: mimeMap, stand: stand)
        case .pathSuffixThenHint:
            let component = SuggestedFilename.lastPathComponent(input.url) ?? ""
            let lower = component.lowercased()
            if let matched = (allowList ?? []).first(where: { lower.hasSuffix($0) }) {
                let written = SuggestedFilename.pathExtension(component)
                return Naming(
                    name: stand + "-" + component, fileExtension: written, rule: "url-path",
                    from: "the URL's last path component '\(component)' ends with '\(matched)'",
                    skipped: written == nil
                        ? "'\(component)' ends with '\(matched)' but has no dot: Airship sets no type hint, and iOS "
                            + "finds no extension" : nil)
            }
            // The MIME type's hint only when its preferred extension is one of the 13; else Airship's byte table.
            let mimeHint = AirshipExtension.typeHint(mime: mime)?.uti
            let hint = mimeHint ?? AirshipExtension.typeHint(head: input.head)
            let from = mimeHint != nil ? mimeText : "the bytes (Airship's own table of magic numbers)"
            var naming = Naming(
                name: stand + "-" + component, fileExtension: SuggestedFilename.pathExtension(component),
                rule: hint == nil ? "none" : "type-hint", from: from, typeHint: hint)
            if hint == nil {
                naming.skipped =
                    "no known extension, and neither \(mimeText) nor the first bytes are in Airship's tables"
            }
            return naming
        case .mimeThenPath:
            if let mime, let format = AttachmentFormat.forMIME(mime) {
                return named(format.extensions[0], rule: "content-type", from: mimeText)
            }
            if let suffix = SuggestedFilename.lastPathComponent(input.url).flatMap(SuggestedFilename.pathExtension) {
                return named(suffix, rule: "url-path", from: "the URL's path extension '.\(suffix)'")
            }
            return none("no Content-Type \(title) knows and no URL extension", from: mimeText)
        }
    }

    /// Whether this SDK's allow-list takes `suffix` (always, without a list).
    package func accepts(_ suffix: String) -> Bool {
        guard let allowList else { return true }
        return allowList.contains(allowListIsCaseSensitive ? suffix : suffix.lowercased())
    }
}

/// A URL's query items, as `URLComponents.queryItems` reads them (percent-decoded).
enum URLQuery {
    static func items(of url: String) -> [(name: String, value: String?)] {
        guard let question = url.firstIndex(of: "?") else { return [] }
        var query = url[url.index(after: question)...]
        if let hash = query.firstIndex(of: "#") { query = query[..<hash] }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : nil
            return (name, value)
        }
    }
}
