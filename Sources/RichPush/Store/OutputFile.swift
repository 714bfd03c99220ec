import Foundation

/// A file a command writes for the user (a report, a JUnit file, a download), written atomically.
///
/// The bytes go to an exclusive temporary (``TemporaryFile``) in the destination's own folder,
/// then a rename gives it its name: a reader sees the old file or the whole new one, a killed run
/// leaves at most a hidden `.richpush-*.part`, and no planted file or link redirects the write.
///
/// ```swift
/// try OutputFile.write(Array(json.utf8), to: "report.json")
/// ```
public enum OutputFile {
    /// Writes `bytes` to `path`, replacing a regular file there (never a folder, link or device).
    public static func write(_ bytes: [UInt8], to path: String, durable: Bool = false) throws(SystemError) {
        let temporary = try create(for: path)
        defer { temporary.discard() }
        try SystemCall.writeAll(temporary.descriptor, bytes, path: path)
        try temporary.commit(as: path, durable: durable)
    }

    /// An exclusive temporary in the folder of `path`, after checking that `path` may be replaced;
    /// give it its name with ``TemporaryFile/commit(as:durable:)``.
    public static func create(for path: String) throws(SystemError) -> TemporaryFile {
        guard !path.isEmpty, !path.hasSuffix("/") else {
            throw SystemError(code: EISDIR, operation: "write", path: path, reason: "that names a folder")
        }
        var info = stat()
        if lstat(path, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG {
            let kind = (info.st_mode & S_IFMT) == S_IFDIR ? "a folder" : "not a regular file"
            throw SystemError(
                code: EEXIST, operation: "write", path: path,
                reason: "it is \(kind); give the path of a file (or remove what is there)")
        }
        let folder = (path as NSString).deletingLastPathComponent
        return try TemporaryFile.createExclusively(in: folder.isEmpty ? "." : folder, prefix: ".richpush-")
    }
}
