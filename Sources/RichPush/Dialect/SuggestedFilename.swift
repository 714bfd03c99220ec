import Foundation

/// `URLResponse.suggestedFilename` as Foundation builds it: the Content-Disposition filename, else the
/// last path component of the response's URL, else its host, else `unknown`; with an extension from
/// the MIME type appended when the name has none ("in most cases", Apple says: richpush appends it
/// exactly then, and only for the common media, text and JSON types, ``preferredExtension``; an
/// inferred rule every outcome that depends on it names). `image/svg+xml` and `image/x-icon` get no
/// extension, which is how notifee's unsanitised `.svg+xml` comes about.
///
/// ```swift
/// SuggestedFilename.of(url: "https://cdn.example.com/avatar", contentType: "image/png", contentDisposition: nil)
/// // "avatar.png"
/// ```
package enum SuggestedFilename {
    /// The extension Apple's type system prefers for a MIME type (UTType.preferredFilenameExtension).
    static let preferredExtension: [String: String] = [
        "image/jpeg": "jpeg", "image/pjpeg": "jpeg", "image/png": "png", "image/gif": "gif", "image/webp": "webp",
        "image/heic": "heic", "image/bmp": "bmp", "image/tiff": "tiff",
        "audio/mpeg": "mp3", "audio/mp4": "m4a", "audio/x-m4a": "m4a", "audio/wav": "wav", "audio/x-wav": "wav",
        "audio/aiff": "aiff", "audio/x-aiff": "aiff", "video/mp4": "mp4", "video/mpeg": "mpg",
        "video/x-msvideo": "avi", "video/quicktime": "mov", "text/html": "html", "text/plain": "txt",
        "application/json": "json", "application/xml": "xml", "text/xml": "xml",
    ]

    /// The MIME type without parameters, lower-cased (`image/png; q=1` gives `image/png`).
    package static func bareMIME(_ contentType: String?) -> String? {
        guard let contentType else { return nil }
        let bare = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        return bare.isEmpty ? nil : bare.lowercased()
    }

    /// The `filename` parameter of a Content-Disposition header (`filename*=UTF-8''...` preferred),
    /// reduced to its last path component; nil when there is none.
    package static func dispositionFilename(_ header: String?) -> String? {
        guard let header else { return nil }
        var plain: String?
        var extended: String?
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            let key = pair[0].lowercased()
            var value = pair[1]
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            if key == "filename" {
                plain = value
            } else if key == "filename*", let quote = value.range(of: "''") {
                extended = String(value[quote.upperBound...]).removingPercentEncoding
            }
        }
        guard let name = (extended ?? plain)?.split(separator: "/").last.map(String.init), !name.isEmpty,
            name != ".", name != ".."
        else { return nil }
        return name
    }

    /// The last path component of `url` as `URL.lastPathComponent` gives it (percent-decoded); nil
    /// when the path is empty or `/`.
    package static func lastPathComponent(_ url: String) -> String? {
        guard let parsed = URL(string: url) else { return nil }
        let component = parsed.lastPathComponent
        return component.isEmpty || component == "/" ? nil : component
    }

    /// The extension of a file name (`URL.pathExtension`'s rule: after the last dot, none for a
    /// leading dot only), as written: case kept.
    package static func pathExtension(_ name: String) -> String? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let suffix = name[name.index(after: dot)...]
        return suffix.isEmpty || suffix.contains("/") ? nil : String(suffix)
    }

    /// What the response suggests, and which part of the response it came from.
    package static func of(url: String, contentType: String?, contentDisposition: String?) -> (
        name: String, source: String
    ) {
        var name: String
        var source: String
        if let fromHeader = dispositionFilename(contentDisposition) {
            (name, source) = (fromHeader, "Content-Disposition")
        } else if let component = lastPathComponent(url) {
            (name, source) = (component, "the URL's last path component")
        } else if let host = URL(string: url)?.host, !host.isEmpty {
            (name, source) = (host, "the URL's host")
        } else {
            (name, source) = ("unknown", "no name in the response")
        }
        if pathExtension(name) == nil, let mime = bareMIME(contentType), let suffix = preferredExtension[mime] {
            name += "." + suffix
            source += " + .\(suffix) from Content-Type \(mime)"
        }
        return (name, source)
    }
}
