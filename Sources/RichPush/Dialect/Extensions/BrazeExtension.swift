/// Braze's extension reading `ab.att` (`BrazeNotificationService`: closed source; richpush follows
/// Braze's published sample extension and the REST API's `apple_push.asset_url`/`asset_file_type`,
/// see `docs/sdks.md`).
///
/// `ab.att` is an object with a string `url` and a string `type`; the type is the file extension the
/// file is saved under (Braze's API sends it lower case, without a dot). A type iOS cannot attach is
/// refused before any download: nothing Braze saves under it could show.
enum BrazeExtension {
    /// The `type` values Braze's REST API lets a campaign send.
    static let apiTypes: Set<String> = ["aif", "gif", "jpg", "m4a", "mp3", "mp4", "png", "wav"]

    static func read(_ root: JSONValue) -> MediaReading {
        guard case .object = root["ab"], let att = root["ab"]?["att"] else {
            return .none(
                "the payload has no 'ab.att'",
                hint: root["att"] != nil ? "'att' is at the top level; Braze reads it from inside 'ab'." : nil)
        }
        guard case .object = att else {
            return .refused(
                .attachmentNotAnObject,
                "'ab.att' is \(att.typeName), not an object with 'url' and 'type'; the plain notification shows.",
                hint: nil, item: nil)
        }
        guard let urlValue = att["url"] else {
            return .refused(
                .attachmentURLMissing, "'ab.att' has no 'url'; the plain notification shows.", hint: nil, item: nil)
        }
        guard case .string(let url) = urlValue else {
            return .refused(
                .attachmentURLNotAString, "'ab.att.url' is \(urlValue.typeName), not a string.", hint: nil, item: nil)
        }
        guard let typeValue = att["type"] else {
            return .refused(
                .attachmentTypeMissing,
                "'ab.att' has no 'type'; the extension cannot name the file, so iOS cannot attach it.", hint: nil,
                item: MediaItem(url: url))
        }
        guard case .string(let declared) = typeValue else {
            return .refused(
                .attachmentTypeNotAString, "'ab.att.type' is \(typeValue.typeName), not a string.", hint: nil,
                item: MediaItem(url: url))
        }
        let item = MediaItem(url: url, declared: declared)
        let normalized = AttachmentFormat.normalizedExtension(declared)
        guard AttachmentFormat.forExtension(declared) != nil else {
            let accepted = AttachmentFormat.all.flatMap(\.extensions).joined(separator: ", ")
            return .refused(
                .unsupportedType,
                "'ab.att.type' is '\(declared)', which is not a file extension iOS can attach (UNError 101). "
                    + "Use one of: \(accepted).",
                hint: declared.contains("/") || declared.contains("..")
                    ? "a type is a file extension, never a path; richpush never builds a path from it." : nil,
                item: item)
        }
        var warnings: [Warning] = []
        if normalized != declared {
            warnings.append(
                Warning(
                    "type-normalized",
                    "'ab.att.type' is '\(declared)'; read as '\(normalized)'. Braze's API sends lower case without a dot."
                ))
        }
        if !apiTypes.contains(normalized) {
            warnings.append(
                Warning(
                    "type-outside-braze-api",
                    "'\(normalized)' works on iOS, but Braze campaigns can only send "
                        + apiTypes.sorted().joined(separator: ", ") + "."))
        }
        return .items([item], warnings: warnings)
    }
}
