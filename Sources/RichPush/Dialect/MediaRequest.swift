/// One media item a dialect reads from a payload: its id (OneSignal's key, Airship's `url_id`), URL
/// and declared type or kind.
package struct MediaItem: Sendable, Equatable {
    package var id: String?
    /// The text the SDK hands to its URL initialiser (after its own trimming, if it trims).
    package var url: String
    package var declared: String?

    package init(id: String? = nil, url: String, declared: String? = nil) {
        self.id = id
        self.url = url
        self.declared = declared
    }
}

/// What a dialect finds in a payload before anything is downloaded: the same four answers for every
/// SDK, each SDK's extension file (`Dialect/Extensions`) deciding which applies.
package enum MediaReading: Sendable, Equatable {
    /// No media request: the push shows as sent. `why` names the keys the SDK reads; `hint`, a likely mistake.
    case none(String, hint: String?)
    /// A media request the SDK does not act on (a gate key missing, a malformed value): its reason,
    /// message, hint, and the item when the payload named one.
    case refused(ReasonCode, String, hint: String?, item: MediaItem?)
    /// The SDK's code raises an uncaught exception on this payload (Objective-C `NSInvalidArgumentException`,
    /// a Swift trap): the extension process dies and iOS shows the notification as sent.
    case raises(String, item: MediaItem?)
    /// The items, in payload order (the SDK's own order is the dialect's ``Dialect/AttachmentPolicy``),
    /// and what the reading noticed.
    case items([MediaItem], warnings: [Warning])
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

    /// The value of `key` as ``has(_:)`` finds it.
    func value(of key: String) -> JSONValue? {
        self[key] ?? at(key.split(separator: ".").map(String.init))
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
    package func isMarked(in root: JSONValue) -> Bool {
        markers.contains { root.has($0) }
    }

    /// The media request of `root` as this SDK's extension reads it: each SDK's own reader
    /// (`Dialect/Extensions/*.swift`, transcribed from its source), or the shared one-URL reader.
    package func readMedia(_ root: JSONValue) -> MediaReading {
        switch media.kind {
        case .braze: return BrazeExtension.read(root)
        case .oneSignal: return OneSignalExtension.read(root)
        case .airship: return AirshipExtension.read(root, key: media.paths.first ?? [])
        case .notifee: return NotifeeExtension.read(root)
        case .url: return readSingleURL(root)
        }
    }

    /// The key whose URL messages about an item name (`ab.att.url`, `fcm_options.image`).
    var urlKey: String {
        switch media.kind {
        case .airship: return Self.dotted(media.paths.first ?? []) + ".url"
        default: return media.paths.first.map(Self.dotted) ?? "url"
        }
    }

    /// One string URL at a key path and an optional declared type beside it: Firebase, Iterable,
    /// CleverTap, Customer.io, Klaviyo, MoEngage and Expo read their media this way, each with its own
    /// keys, gate and wrong-type rule (``MediaSource``).
    private func readSingleURL(_ root: JSONValue) -> MediaReading {
        let path = media.paths.first ?? []
        guard let value = root.at(path) else {
            return .none("the payload has no '\(Self.dotted(path))', the key \(title)'s extension reads", hint: nil)
        }
        guard case .string(let url) = value else {
            let what = "'\(Self.dotted(path))' is \(value.typeName), not a string"
            switch media.wrongType {
            case .refused:
                return .refused(.attachmentURLNotAString, what + ".", hint: nil, item: nil)
            case .ignored:
                return .none(
                    what + ", and \(title)'s extension reads it only as a string (it skips the media)", hint: nil)
            case .raises:
                return .raises(
                    what + ", and \(title)'s extension uses it as one without checking: it raises, and iOS shows the "
                        + "notification as sent.", item: nil)
            }
        }
        if media.wrongType == .ignored && url.isEmpty {
            return .none("'\(Self.dotted(path))' is empty, and \(title)'s extension skips an empty URL", hint: nil)
        }
        // The gate: keys the extension needs before it handles the push (Customer.io: both delivery
        // keys, as strings, `PushNotification.init?`; CleverTap: the media type).
        let missingGate = gate.filter { key in
            guard let gateValue = root.value(of: key) else { return true }
            if media.gateNeedsStrings, case .string = gateValue { return false }
            return media.gateNeedsStrings
        }
        if !missingGate.isEmpty {
            let needed = gate.map { "'\($0)'" }.joined(separator: " and ")
            let missing = missingGate.map { key in
                root.value(of: key).map { "'\(key)' (\($0.typeName))" } ?? "'\(key)'"
            }.joined(separator: " and ")
            if case .showsOriginal(let reason) = gateMissing {
                return .refused(
                    reason,
                    "\(title) needs \(gate.count > 1 ? "both " : "")\(needed); without \(missing) it shows the "
                        + "original content.", hint: nil, item: MediaItem(url: url))
            }
            let condition = media.gateNeedsStrings ? "are strings" : (gate.count > 1 ? "are present" : "is present")
            return .refused(
                .attachmentURLMissing,
                "\(title)'s extension reads '\(Self.dotted(path))' only when \(needed) \(condition); without "
                    + "\(missing) it does not handle the push (it does not call the content handler; the app's own "
                    + "code must), so no image shows.", hint: nil, item: MediaItem(url: url))
        }
        var declared: String?
        if let typePath = media.typePath, let typeValue = root.at(typePath) {
            if case .string(let text) = typeValue {
                declared = text
            } else {
                let what = "'\(Self.dotted(typePath))' is \(typeValue.typeName), not a string"
                switch media.wrongType {
                case .refused:
                    return .refused(.attachmentTypeNotAString, what + ".", hint: nil, item: MediaItem(url: url))
                case .ignored:
                    // Klaviyo: `as? String ?? "jpg"`: any other value is the default.
                    declared = nil
                case .raises:
                    return .raises(
                        what + ": \(title)'s extension downloads the media, then compares the type as a string "
                            + "without checking and raises; iOS shows the notification as sent.",
                        item: MediaItem(url: url))
                }
            }
        }
        if declared == nil { declared = media.defaultType }
        return .items([MediaItem(url: url, declared: declared)], warnings: [])
    }
}
