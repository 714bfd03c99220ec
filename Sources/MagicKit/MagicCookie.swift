import CMagic

/// One libmagic handle with its database loaded.
///
/// - Warning: a cookie must not be used by two threads at once; ``MagicPool`` hands each one to a
///   single thread at a time, which is what makes the `@unchecked Sendable` sound.
final class MagicCookie: @unchecked Sendable {
    private let cookie: magic_t

    /// Opens a cookie and loads the system database; `nil` when libmagic or its database is missing.
    init?() {
        // MAGIC_NO_CHECK_BUILTIN skips the text/tar/ELF/CDF/JSON/CSV checks: much faster on
        // non-media input, and media answers come from the soft database either way. No MAGIC_COMPRESS:
        // a gzip body must be reported as gzip, not looked inside.
        guard let cookie = magic_open(MAGIC_MIME_TYPE | RP_MAGIC_NO_CHECK_BUILTIN) else { return nil }
        guard magic_load(cookie, nil) == 0 else {
            magic_close(cookie)
            return nil
        }
        self.cookie = cookie
    }

    deinit {
        magic_close(cookie)
    }

    /// The MIME type and the human description of `bytes`.
    ///
    /// Media is identified by the soft database alone, the fast path. When that finds nothing
    /// (`application/octet-stream`), the builtin checks run too, so an HTML error page or a text
    /// body is named as such in reports rather than called "data".
    func identify(_ bytes: UnsafeRawBufferPointer, describing: Bool) -> (mime: String, description: String) {
        var flags = RP_MAGIC_NO_CHECK_BUILTIN
        var mime = query(bytes, flags: MAGIC_MIME_TYPE | flags) ?? "application/octet-stream"
        if mime == "application/octet-stream" {
            flags = MAGIC_NONE
            mime = query(bytes, flags: MAGIC_MIME_TYPE) ?? mime
        }
        let description = describing ? query(bytes, flags: MAGIC_NONE | flags) ?? "data" : ""
        return (mime, description)
    }

    private func query(_ bytes: UnsafeRawBufferPointer, flags: Int32) -> String? {
        guard magic_setflags(cookie, flags) == 0 else { return nil }
        // An empty buffer needs a valid pointer all the same.
        var empty: UInt8 = 0
        let answer = withUnsafeMutablePointer(to: &empty) { fallback in
            magic_buffer(cookie, bytes.baseAddress ?? UnsafeRawPointer(fallback), bytes.count)
        }
        guard let answer else { return nil }
        return String(cString: answer)
    }
}
