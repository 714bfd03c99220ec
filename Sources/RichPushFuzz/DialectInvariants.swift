import RichPush

/// Every SDK dialect over untrusted input: lines 1 to 3 are a URL, a Content-Type and a
/// Content-Disposition (a server's), the rest a payload (a sender's).
///
/// - Reading the media keys, `--sdk auto` and the delivered content never trap.
/// - `--sdk auto` picks a dialect of the catalogue.
/// - No SDK's file name that it goes on to use (or `suggestedFilename`) has a `/` in it: whatever the
///   server says, the name stays one path component (notifee's unsanitised subtype can make a path:
///   that one is reported as skipped), and its extension is part of the name.
/// - An item read from the payload carries the payload's own URL text.
enum DialectInvariants {
    /// Builds the dialect catalogue and the detection order (static, built once), outside any input.
    static func prepare() {
        _ = Dialect.all.count + DialectDetection.order.count
        _ = SuggestedFilename.of(url: "https://cdn.example.com/a", contentType: "image/png", contentDisposition: nil)
        _ = AttachmentFormat.forExtension("png")
    }

    static func check(_ bytes: [UInt8]) {
        let lines = splitLines(bytes)
        func line(_ index: Int) -> String? {
            index < lines.count ? String(decoding: lines[index], as: UTF8.self) : nil
        }
        let url = line(0) ?? ""
        let contentType = line(1)
        let disposition = line(2)
        let suggested = SuggestedFilename.of(url: url, contentType: contentType, contentDisposition: disposition)
        require(!suggested.name.contains("/"), "suggestedFilename '\(suggested.name)' has a '/'")
        let root = try? JSONValue.parse(Array(lines.dropFirst(3).joined(separator: [UInt8(ascii: "\n")])))
        let detected = DialectDetection.detect(root)
        require(Dialect.all.contains(detected), "--sdk auto picked '\(detected.name)', not a dialect")
        for dialect in Dialect.all {
            for declared in [nil, contentType, "jpg", "image"] as [String?] {
                let naming = dialect.name(
                    NamingInput(url: url, contentType: contentType, contentDisposition: disposition, declared: declared)
                )
                if let name = naming.name, naming.skipped == nil {
                    require(!name.contains("/"), "\(dialect.name) named the file '\(name)'")
                }
                if let suffix = naming.fileExtension, let name = naming.name {
                    require(name.hasSuffix(suffix), "\(dialect.name): '\(name)' does not end with '\(suffix)'")
                }
            }
            guard let root else { continue }
            if case .items(let items, _) = dialect.readMedia(root) {
                require(
                    !items.isEmpty || dialect.textOverrides?.appliesWithoutMedia == true,
                    "\(dialect.name) read an empty list of items")
                for item in items where dialect.media.kind == .oneSignal {
                    require(
                        item.url.trimmingCharacters(in: .whitespaces) == item.url,
                        "OneSignal's item '\(item.url)' is not trimmed")
                }
            }
            for verdict in Verdict.allCases {
                let delivered = dialect.delivered(verdict, attached: 1, root: root)
                require(
                    ["original", "composed", "best-attempt", "nothing"].contains(delivered.content),
                    "\(dialect.name) delivered '\(delivered.content)'")
            }
        }
    }
}
