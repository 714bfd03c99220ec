/// One media item a dialect reads from a payload: its id (OneSignal's key, Airship's `url_id`), URL
/// and declared type or kind.
public struct MediaItem: Sendable, Equatable {
    public var id: String?
    public var url: String
    public var declared: String?

    public init(id: String? = nil, url: String, declared: String? = nil) {
        self.id = id
        self.url = url
        self.declared = declared
    }
}

/// What a dialect finds in a payload before anything is downloaded.
public enum MediaReading: Sendable, Equatable {
    /// No media key: the push shows as sent, and richpush says which keys the SDK reads.
    case none(String)
    /// A media request the SDK does not act on (a gate key missing, a malformed value): its reason and message.
    case refused(ReasonCode, String)
    /// The items, in payload order (the SDK's own order is the dialect's ``Dialect/AttachmentPolicy``).
    case items([MediaItem])
}

extension JSONValue {
    /// The value at a key path; a path element that is a number indexes an array.
    func at(_ path: [String]) -> JSONValue? {
        var value: JSONValue? = self
        for key in path {
            guard let current = value else { return nil }
            if case .array(let items) = current, let index = Int(key) {
                value = index < items.count ? items[index] : nil
            } else if case .object = current {
                value = current[key]
            } else {
                return nil
            }
        }
        return value
    }

    /// Whether the payload has `key`: a top-level key as written (`gcm.message_id`,
    /// `com.urbanairship.media_attachment`), else a dotted path (`os_data.buttons`).
    func has(_ key: String) -> Bool {
        self[key] != nil || at(key.split(separator: ".").map(String.init)) != nil
    }

    /// The string at a key path, when it is one.
    func string(at path: [String]) -> String? {
        if case .string(let text)? = at(path) { return text }
        return nil
    }
}

extension Dialect {
    /// The keys of `path` joined as a dotted name, for messages.
    static func dotted(_ path: [String]) -> String { path.joined(separator: ".") }

    /// Whether `root` carries a marker key of this dialect (a dotted path, checked one level at a time).
    public func isMarked(in root: JSONValue) -> Bool {
        markers.contains { root.has($0) }
    }

    /// The media request of `root` as this SDK's extension reads it.
    public func readMedia(_ root: JSONValue) -> MediaReading {
        let keys = media.keys.joined(separator: ", ")
        let missingGate = gate.filter { !root.has($0) }
        switch media.kind {
        case .braze:
            return .none("Braze's media is read by the pipeline's own reader")
        case .url:
            let path = media.paths.first ?? []
            let typePath = media.typePath
            let defaultType = media.defaultType
            guard let value = root.at(path) else {
                return .none("the payload has no '\(Self.dotted(path))', the key \(title)'s extension reads")
            }
            guard case .string(let url) = value else {
                return .refused(.attachmentURLNotAString, "'\(Self.dotted(path))' is \(value.typeName), not a string.")
            }
            if !missingGate.isEmpty {
                let missing = missingGate.map { "'\($0)'" }.joined(separator: " and ")
                if case .showsOriginal(let reason) = gateMissing {
                    let needed = gate.map { "'\($0)'" }.joined(separator: " and ")
                    return .refused(
                        reason,
                        "\(title) needs \(gate.count > 1 ? "both " : "")\(needed); without \(missing) it shows the "
                            + "original content.")
                }
                return .refused(
                    .attachmentURLMissing,
                    "\(title)'s extension reads '\(Self.dotted(path))' only when \(missing) "
                        + (missingGate.count > 1 ? "are" : "is")
                        + " present: without them it does not handle the push (it does not call the content handler; "
                        + "the app's own code must), so no image shows.")
            }
            var declared = typePath.flatMap { root.string(at: $0) }
            if declared == nil, let typePath, let typeValue = root.at(typePath) {
                return .refused(
                    .attachmentTypeNotAString, "'\(Self.dotted(typePath))' is \(typeValue.typeName), not a string.")
            }
            if declared == nil { declared = defaultType }
            return .items([MediaItem(url: url, declared: declared)])
        case .firstOf:
            let paths = media.paths
            if !missingGate.isEmpty { return .none("the payload has no '\(gate.joined(separator: "', '"))'") }
            for path in paths {
                if let url = root.string(at: path), url.count > 1 { return .items([MediaItem(url: url)]) }
            }
            return .none("the payload has none of \(keys)")
        case .dictionary:
            let paths = media.paths
            guard let path = paths.first(where: { root.at($0) != nil }), let value = root.at(path) else {
                return .none("the payload has none of \(keys), the keys \(title)'s extension reads")
            }
            guard case .object(let members) = value else {
                return .refused(
                    .attachmentNotAnObject,
                    "'\(Self.dotted(path))' is \(value.typeName), not an object of {id: url}; \(title) attaches nothing."
                )
            }
            let items = members.compactMap { member -> MediaItem? in
                guard case .string(let url) = member.value else { return nil }
                return MediaItem(id: member.key, url: url)
            }
            guard !items.isEmpty else {
                return .refused(
                    .attachmentURLMissing, "'\(Self.dotted(path))' holds no string URL; \(title) attaches nothing.")
            }
            return .items(items)
        case .airship:
            let path = media.paths.first ?? []
            guard let value = root.at(path) else {
                return .none("the payload has no '\(Self.dotted(path))', the key Airship's extension reads")
            }
            return Self.readAirship(value, key: Self.dotted(path))
        }
    }

    /// `MediaAttachmentPayload`'s rules (its tests, read): `urls[{url,url_id}]` wins over `url`; `url`
    /// is a string or an array (`[]` is valid, no media); any invalid field means no mutation at all.
    static func readAirship(_ value: JSONValue, key: String) -> MediaReading {
        guard case .object = value else {
            return .refused(
                .attachmentNotAnObject, "'\(key)' is \(value.typeName), not an object; Airship changes nothing.")
        }
        func invalid(_ what: String) -> MediaReading {
            .refused(.attachmentNotAnObject, "'\(key)' is invalid (\(what)): Airship does not mutate the notification.")
        }
        if let options = value["options"] {
            guard case .object = options else { return invalid("'options' is not an object") }
            if let crop = options["crop"] {
                let parts = ["x", "y", "width", "height"].map { crop[$0] }
                let inRange = parts.allSatisfy { part in
                    if case .number(let text)? = part, let number = Double(text) { return (0...1).contains(number) }
                    return false
                }
                guard inRange else { return invalid("'options.crop' needs x, y, width and height, each in [0,1]") }
            }
        }
        if let content = value["content"] {
            guard case .object(let members) = content else { return invalid("'content' is not an object") }
            for member in members {
                guard case .string = member.value else { return invalid("'content.\(member.key)' is not a string") }
            }
        }
        if let urls = value["urls"] {
            guard case .array(let entries) = urls else { return invalid("'urls' is not an array") }
            var items: [MediaItem] = []
            for entry in entries {
                guard case .string(let url)? = entry["url"] else {
                    return invalid("an entry of 'urls' has no string 'url'")
                }
                var id: String?
                if case .string(let text)? = entry["url_id"] { id = text }
                items.append(MediaItem(id: id, url: url))
            }
            return items.isEmpty ? .none("'\(key).urls' is empty: no media") : .items(items)
        }
        switch value["url"] {
        case .string(let url)?: return .items([MediaItem(url: url)])
        case .array(let entries)?:
            var items: [MediaItem] = []
            for entry in entries {
                guard case .string(let url) = entry else { return invalid("an element of 'url' is not a string") }
                items.append(MediaItem(url: url))
            }
            return items.isEmpty ? .none("'\(key).url' is an empty array: no media") : .items(items)
        case nil: return .refused(.attachmentURLMissing, "'\(key)' has no 'url' or 'urls'; Airship attaches nothing.")
        case let other?: return invalid("'url' is \(other.typeName)")
        }
    }
}
