import Foundation
import POSIXKit

/// A file a command writes for the user (a report, a JUnit file, a download), as curl and oha write theirs.
///
/// Where the bytes go depends on what the path names:
/// - `-` is stdout;
/// - a path that exists and is not a regular file (a FIFO, a device, `/dev/stdout`, a symbolic link
///   to one of them) is opened and written directly, never renamed over;
/// - anything else is a regular file, replaced atomically: the bytes go to an exclusive temporary
///   (``TemporaryFile``) in the destination's own folder, unnamed (`O_TMPFILE`) where the file
///   system allows it, and a link or rename gives it its name, so a reader sees the old file or the
///   whole new one and a killed run leaves nothing (at most a hidden `.richpush-*.part` where the
///   temporary had to be named).
///   A symbolic link is never renamed over: what it leads to is written through it (`/dev/stdout`
///   reaches the process's stdout, even when that is a file).
///
/// Nothing reaches stdout, a FIFO or a device until ``PendingOutput/commit(durable:)``: until then the
/// bytes wait in a temporary, so a run that fails before it produced its output writes nothing there.
/// A FIFO or device is opened when the output is (``open(_:)``), without blocking: a FIFO that nothing
/// reads is refused then, before the command does any work, where waiting for a reader would hang the
/// run at its end.
///
/// ```swift
/// try OutputFile.write(Array(json.utf8), to: "report.json")   // or "-", or "/dev/stdout"
/// ```
package enum OutputFile {
    /// What an output path leads to.
    package enum Target: Sendable, Equatable {
        /// `-`: the process's stdout.
        case standardOutput
        /// An existing FIFO, device or socket, or a symbolic link to anything but a folder: written
        /// directly, through the link.
        case stream(path: String)
        /// A regular file (existing or not) at this path, replaced atomically.
        case file(path: String)
    }

    /// Writes `bytes` to `path` (see ``OutputFile`` for what each kind of path means).
    package static func write(_ bytes: [UInt8], to path: String, durable: Bool = false) throws(SystemError) {
        let pending = try open(path)
        defer { pending.discard() }
        try SystemCall.writeAll(pending.descriptor, bytes, path: pending.displayPath)
        try pending.commit(durable: durable)
    }

    /// Starts an output: write to ``PendingOutput/descriptor``, then commit or discard.
    ///
    /// Fails at once when the destination cannot be written (its folder is missing, it is a folder,
    /// a dangling link), so a command can check its outputs before it does the work.
    package static func open(_ path: String) throws(SystemError) -> PendingOutput {
        let target = try target(of: path)
        switch target {
        case .file(let file):
            let folder = (file as NSString).deletingLastPathComponent
            let temporary = try TemporaryFile.create(in: folder.isEmpty ? "." : folder, prefix: ".richpush-")
            return PendingOutput(target: target, temporary: temporary, displayPath: path)
        case .standardOutput:
            let temporary = try TemporaryFile.create(in: scratchFolder, prefix: ".richpush-out-")
            return PendingOutput(target: target, temporary: temporary, displayPath: "stdout")
        case .stream(let stream):
            let descriptor = try openStream(stream)
            do {
                let temporary = try TemporaryFile.create(in: scratchFolder, prefix: ".richpush-out-")
                return PendingOutput(target: target, temporary: temporary, displayPath: path, stream: descriptor)
            } catch {
                close(descriptor)
                throw error
            }
        }
    }

    /// Opens a FIFO, device or link for writing without waiting for a reader, then makes it blocking
    /// for the writes. A FIFO with no reader (`ENXIO`) is refused with what to do.
    static func openStream(_ path: String) throws(SystemError) -> Int32 {
        let descriptor = Glibc.open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            var info = stat()
            if code == ENXIO, stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFIFO {
                throw SystemError(
                    code: code, operation: "write", path: path,
                    reason: "it is a FIFO that nothing reads: start its reader first (for example "
                        + "'cat \(path) > copy &'), or give a file")
            }
            DescriptorExhaustion.note(errno: code)
            throw SystemError(code: code, operation: "write", path: path)
        }
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
        return descriptor
    }

    /// An exclusive temporary in the folder of `path`, after checking that `path` names a regular file
    /// (or nothing yet); give it its name with ``TemporaryFile/commit(as:durable:)``.
    package static func create(for path: String) throws(SystemError) -> TemporaryFile {
        guard case .file(let file) = try target(of: path) else {
            throw SystemError(
                code: EINVAL, operation: "write", path: path, reason: "it is not a regular file; give a file name")
        }
        let folder = (file as NSString).deletingLastPathComponent
        return try TemporaryFile.create(in: folder.isEmpty ? "." : folder, prefix: ".richpush-")
    }

    /// Decides where `path` leads, following links only to find out what they lead to.
    package static func target(of path: String) throws(SystemError) -> Target {
        if path == "-" { return .standardOutput }
        guard !path.isEmpty, !path.hasSuffix("/") else {
            throw SystemError(code: EISDIR, operation: "write", path: path, reason: "that names a folder")
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            guard errno == ENOENT else { throw SystemError.current("write", path: path) }
            try checkFolder(of: path)
            return .file(path: path)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file(path: path)
        case S_IFDIR:
            throw SystemError(code: EISDIR, operation: "write", path: path, reason: "it is a folder; give a file name")
        case S_IFLNK:
            // Written through, never renamed over: the link stays, whatever it leads to gets the bytes.
            var resolvedInfo = stat()
            guard stat(path, &resolvedInfo) == 0 else {
                throw SystemError(
                    code: ENOENT, operation: "write", path: path,
                    reason: "it is a symbolic link to nothing; remove the link or give another path")
            }
            guard (resolvedInfo.st_mode & S_IFMT) != S_IFDIR else {
                throw SystemError(
                    code: EISDIR, operation: "write", path: path, reason: "it leads to a folder; give a file name")
            }
            return .stream(path: path)
        default: return .stream(path: path)
        }
    }

    /// Where bytes for stdout or a stream wait until the commit: `$TMPDIR`, else `/tmp`.
    static var scratchFolder: String {
        let folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return folder.count > 1 && folder.hasSuffix("/") ? String(folder.dropLast()) : folder
    }

    /// Fails with a plain message when the folder a new file would go in does not exist.
    private static func checkFolder(of path: String) throws(SystemError) {
        let folder = (path as NSString).deletingLastPathComponent
        var info = stat()
        guard stat(folder.isEmpty ? "." : folder, &info) == 0 else {
            throw SystemError(
                code: errno, operation: "write", path: path,
                reason: errno == ENOENT ? "its folder '\(folder)' does not exist; create it first" : nil)
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw SystemError(code: ENOTDIR, operation: "write", path: path, reason: "'\(folder)' is not a folder")
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// An output being written: bytes go to ``descriptor``; ``commit(durable:)`` puts them in place.
///
/// Used by one task at a time (the `@unchecked Sendable` rests on that); ``discard()`` must be reached
/// on every path, and is harmless after a commit.
package final class PendingOutput: @unchecked Sendable {
    /// Where the output goes.
    package let target: OutputFile.Target
    /// The path as the user gave it (`stdout` for `-`), for messages.
    package let displayPath: String
    private let temporary: TemporaryFile
    /// A stream target's descriptor, opened with the output (``OutputFile/openStream(_:)``); -1 once closed.
    private var stream: Int32

    init(target: OutputFile.Target, temporary: TemporaryFile, displayPath: String, stream: Int32 = -1) {
        self.target = target
        self.temporary = temporary
        self.displayPath = displayPath
        self.stream = stream
    }

    /// The descriptor the output's bytes are written to before the commit.
    package var descriptor: Int32 { temporary.descriptor }

    /// Puts the bytes in place: renames a regular file, or copies them to stdout or the stream.
    package func commit(durable: Bool = false) throws(SystemError) {
        switch target {
        case .file(let path):
            try temporary.commit(as: path, durable: durable)
        case .standardOutput:
            // Whatever the process printed through stdio comes first.
            fflush(nil)
            try copy(to: 1)
        case .stream(let path):
            if stream < 0 { stream = try OutputFile.openStream(path) }
            defer { closeStream() }
            var info = stat()
            if fstat(stream, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG {
                // `/dev/stdout` or `/dev/fd/1` on a file: append where stdout is, never truncate it.
                var standardOutput = stat()
                if fstat(1, &standardOutput) == 0 && standardOutput.st_dev == info.st_dev
                    && standardOutput.st_ino == info.st_ino
                {
                    fflush(nil)
                    try copy(to: 1)
                    return
                }
                try SystemCall.retrying("truncate", path: path) { ftruncate(stream, 0) }
            }
            try copy(to: stream)
        }
    }

    /// Removes the temporary (after a commit of a file, only closes it) and closes a stream. Idempotent.
    package func discard() {
        temporary.discard()
        closeStream()
    }

    private func closeStream() {
        if stream >= 0 { close(stream) }
        stream = -1
    }

    /// Copies the temporary's content to `destination`, in blocks.
    private func copy(to destination: Int32) throws(SystemError) {
        var offset: Int64 = 0
        while true {
            let block = try SystemCall.preadAll(
                temporary.descriptor, count: 1 << 20, offset: offset, path: displayPath)
            if block.isEmpty { return }
            try SystemCall.writeAll(destination, block, path: displayPath)
            offset += Int64(block.count)
        }
    }
}
