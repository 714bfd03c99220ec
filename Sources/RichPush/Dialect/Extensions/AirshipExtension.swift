import Foundation

/// Airship's extension (`urbanairship/ios-library`, `AirshipExtensions/AirshipNotificationServiceExtension/Source/`)
/// as it reads `com.urbanairship.media_attachment` and types the files. Every rule is in `docs/sdks.md`.
///
/// - `UANotificationServiceExtension.swift@0ce6fc3:L124-L133`: only a dictionary is a media payload
///   (anything else: the push as sent); it is decoded into `MediaAttachmentPayload`, and a decoding
///   error leaves the notification untouched.
/// - `MediaAttachmentPayload.swift@6858b29:L26-L57,L68-L81,L112-L132`: `urls` (present, even `null`)
///   wins over `url`; `urls` is `[[String: String]]`; `url` is `[String]` or `String`; an entry without
///   a `url` or whose `URL(string:)` is nil is dropped; `thumbnail_id` a string; `options` an object
///   with `time` a number, `hidden` a bool, `crop` all numbers with `x`, `y`, `width`, `height` in [0, 1];
///   `content` an object whose `title`, `subtitle`, `body` are strings (other members ignored).
/// - `AirshipNotificationMutationProvider.swift@01e28d2:L37-L42`: the text of `content` applies even
///   with no media.
enum AirshipExtension {
    static func read(_ root: JSONValue, key path: [String]) -> MediaReading {
        let key = Dialect.dotted(path)
        guard let value = root.at(path) else {
            return .none("the payload has no '\(key)', the key Airship's extension reads", hint: nil)
        }
        guard case .object = value else {
            return .none(
                "'\(key)' is \(value.typeName), not a dictionary, so Airship's extension reads no media payload and "
                    + "delivers the notification as sent", hint: nil)
        }
        func invalid(_ what: String) -> MediaReading {
            .refused(
                .attachmentNotAnObject,
                "'\(key)' does not decode as Airship's MediaAttachmentPayload (\(what)): Airship delivers the "
                    + "notification unchanged, with no attachment and no text from 'content'.", hint: nil, item: nil)
        }
        if let thumbnail = value["thumbnail_id"], !thumbnail.isNull, !thumbnail.isString {
            return invalid("'thumbnail_id' is \(thumbnail.typeName), not a string")
        }
        if let options = value["options"], !options.isNull {
            guard case .object = options else { return invalid("'options' is \(options.typeName), not an object") }
            if let time = options["time"], !time.isNull, !time.isNumber {
                return invalid("'options.time' is \(time.typeName), not a number")
            }
            if let hidden = options["hidden"], !hidden.isNull, !hidden.isBool {
                return invalid("'options.hidden' is \(hidden.typeName), not a boolean")
            }
            if let crop = options["crop"], !crop.isNull {
                guard case .object(let members) = crop else {
                    return invalid("'options.crop' is \(crop.typeName), not an object of numbers")
                }
                if let bad = members.first(where: { !$0.value.isNumber }) {
                    return invalid("'options.crop.\(bad.key)' is \(bad.value.typeName), not a number")
                }
                let inRange = ["x", "y", "width", "height"].allSatisfy { name in
                    if case .number(let text)? = crop[name], let number = Double(text) {
                        return (0...1).contains(number)
                    }
                    return false
                }
                guard inRange else { return invalid("'options.crop' needs x, y, width and height, each in [0, 1]") }
            }
        }
        if let content = value["content"], !content.isNull {
            guard case .object = content else { return invalid("'content' is \(content.typeName), not an object") }
            for name in ["title", "subtitle", "body"] {
                if let text = content[name], !text.isNull, !text.isString {
                    return invalid("'content.\(name)' is \(text.typeName), not a string")
                }
            }
        }
        var items: [MediaItem] = []
        var dropped: [String] = []
        func take(_ url: String?, id: String?, what: String) {
            guard let url, URL(string: url) != nil else {
                dropped.append(what)
                return
            }
            items.append(MediaItem(id: id, url: url))
        }
        if let urls = value["urls"] {
            guard case .array(let entries) = urls else {
                return invalid("'urls' is \(urls.typeName), not an array of objects of strings")
            }
            for (index, entry) in entries.enumerated() {
                guard case .object(let members) = entry else {
                    return invalid("'urls[\(index)]' is \(entry.typeName), not an object of strings")
                }
                if let bad = members.first(where: { !$0.value.isString }) {
                    return invalid("'urls[\(index)].\(bad.key)' is \(bad.value.typeName), not a string")
                }
                take(
                    entry["url"].flatMap(\.stringValue), id: entry["url_id"].flatMap(\.stringValue),
                    what: "urls[\(index)]")
            }
        } else {
            switch value["url"] {
            case .string(let url)?: take(url, id: nil, what: "url")
            case .array(let entries)?:
                for (index, entry) in entries.enumerated() {
                    guard case .string(let url) = entry else {
                        return invalid("'url[\(index)]' is \(entry.typeName), not a string")
                    }
                    take(url, id: nil, what: "url[\(index)]")
                }
            case nil: return invalid("it has neither 'urls' nor 'url'")
            case let other?: return invalid("'url' is \(other.typeName), not a string or an array of strings")
            }
        }
        var warnings: [Warning] = []
        if !dropped.isEmpty {
            warnings.append(
                Warning(
                    "media-entry-dropped",
                    "Airship drops \(dropped.joined(separator: ", ")): no 'url', or one URL(string:) cannot read; "
                        + "the other entries are attached."))
        }
        return .items(items, warnings: warnings)
    }

    /// The 13 strings a file name must end with (lower-cased, no dot needed)
    /// (`AirshipNotificationMutationProvider.swift@01e28d2:L7,L85-L87`).
    static let knownExtensions = [
        "jpg", "jpeg", "png", "gif", "aif", "aiff", "mp3", "mpg", "mpeg", "mp4", "m4a", "wav", "avi",
    ]

    /// Airship's own byte table, tried in order (`AirshipNotificationMutationProvider.swift@01e28d2:L132-L177`):
    /// the UTI, the offset, and the signatures (any one matches).
    static let byteTable: [(uti: String, offset: Int, signatures: [[UInt8]])] = [
        ("public.jpeg", 0, [[0xFF, 0xD8, 0xFF, 0xE0], [0xFF, 0xD8, 0xFF, 0xE2], [0xFF, 0xD8, 0xFF, 0xE3]]),
        ("public.png", 0, [[0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]]),
        ("com.compuserve.gif", 0, [Array("GIF8".utf8)]),
        ("public.aiff-audio", 0, [Array("FORM".utf8) + [0]]),
        ("com.microsoft.waveform-audio", 8, [Array("WAVE".utf8)]),
        ("public.avi", 8, [Array("AVI ".utf8)]),
        ("public.mp3", 0, [Array("ID3".utf8)]),
        ("public.mpeg-4", 4, ["ftypmp41", "ftypmp42", "ftypmmp4", "ftypisom"].map { Array($0.utf8) }),
        ("public.mpeg-4-audio", 4, [Array("ftypM4A ".utf8)]),
        ("public.mpeg", 0, [[0x00, 0x00, 0x01, 0xBA], [0x00, 0x00, 0x01, 0xB3]]),
    ]

    /// The UTI Airship's byte table gives the first bytes of a file, or nil.
    static func typeHint(head: [UInt8]) -> String? {
        for entry in byteTable {
            for signature in entry.signatures where head.count >= entry.offset + signature.count {
                if Array(head[entry.offset..<entry.offset + signature.count]) == signature { return entry.uti }
            }
        }
        return nil
    }

    /// The type hint from a MIME type: the type's preferred extension must be one of ``knownExtensions``.
    static func typeHint(mime: String?) -> AttachmentFormat? {
        guard let mime, let format = AttachmentFormat.forMIME(mime),
            let preferred = SuggestedFilename.preferredExtension[mime] ?? format.extensions.first,
            knownExtensions.contains(preferred)
        else { return nil }
        return format
    }
}

extension JSONValue {
    var isNull: Bool {
        if case .null = self { return true }
        return false
    }
    var isString: Bool {
        if case .string = self { return true }
        return false
    }
    var isNumber: Bool {
        if case .number = self { return true }
        return false
    }
    var isBool: Bool {
        if case .bool = self { return true }
        return false
    }
    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}
