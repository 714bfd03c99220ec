import Foundation
import Synchronization

/// A temporary file beside its destination: created exclusively, never through a link, mode 0600
/// while it is written; the file it becomes has the mode the umask gives (``SystemCall/creationMode``).
///
/// It gets its final name by ``commit(as:durable:)`` (a rename inside one folder, atomic for readers
/// and for a killed process) or disappears by ``discard()``, which every path must reach. Names are
/// random (`<prefix><random>.part`), so a planted file or link at a predictable name redirects nothing.
///
/// ```swift
/// let temporary = try TemporaryFile.createExclusively(in: "out", prefix: ".richpush-")
/// defer { temporary.discard() }
/// try SystemCall.writeAll(temporary.descriptor, bytes, path: temporary.path)
/// try temporary.commit(as: "out/report.json")
/// ```
///
/// Used by one task at a time, which is what makes the `@unchecked Sendable` sound. Every live
/// temporary is known to ``removeAllLive()``, so a process stopped by a second Ctrl-C can remove them.
public final class TemporaryFile: @unchecked Sendable {
    public let path: String
    public let descriptor: Int32
    /// Another name shares this file's content (it was linked or renamed into place, or made as a
    /// link): it must never be emptied, only its temporary name removed.
    public var isLinked = false
    /// The pool it returns to when its content is not kept.
    var pool: ScratchPool?
    private var discarded = false

    init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
        Self.live.withLock { _ = $0.insert(path) }
    }

    /// Creates a new, empty temporary in `folder`: `O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600, random name.
    public static func createExclusively(in folder: String, prefix: String = ".richpush-") throws(SystemError)
        -> TemporaryFile
    {
        var failure = SystemError(code: EEXIST, operation: "create a temporary file in", path: folder)
        for _ in 0..<8 {
            let path = folder + "/" + prefix + randomName() + ".part"
            do {
                let descriptor = try SystemCall.retrying("create a temporary file in", path: folder) {
                    open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
                }
                return TemporaryFile(path: path, descriptor: descriptor)
            } catch {
                failure = error
                if error.code != EEXIST { break }
            }
        }
        throw failure
    }

    /// Gives the file its final name `destination` (in the same folder), replacing a regular file
    /// there but never a folder, link, FIFO or device. With `durable`, the data and the new name are
    /// flushed to disk first and after.
    public func commit(as destination: String, durable: Bool = false) throws(SystemError) {
        var info = stat()
        if lstat(destination, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG {
            let kind =
                switch info.st_mode & S_IFMT {
                case S_IFDIR: "a folder"
                case S_IFLNK: "a symbolic link"
                default: "a FIFO, socket or device"
                }
            throw SystemError(
                code: EEXIST, operation: "replace", path: destination,
                reason: "it is \(kind), not a regular file; give the path of a file (or remove what is there)")
        }
        // The mode any tool's new file gets (0666 less the umask), not the temporary's 0600.
        _ = fchmod(descriptor, SystemCall.creationMode)
        if durable { try SystemCall.retrying("flush", path: path) { fsync(descriptor) } }
        try SystemCall.retrying("rename a temporary file to", path: destination) { rename(path, destination) }
        isLinked = true
        Self.live.withLock { _ = $0.remove(path) }
        if durable { Self.syncFolder(of: destination) }
    }

    /// Ends this use of the file: back to its pool, emptied, if it can be; otherwise closed and its
    /// temporary name removed (after a commit only the descriptor is closed). Idempotent.
    public func discard() {
        guard !discarded else { return }
        discarded = true
        if !isLinked, let pool, pool.give(path: path, descriptor: descriptor) { return }
        close(descriptor)
        if Self.live.withLock({ $0.remove(path) != nil }) { unlink(path) }
    }

    deinit { discard() }

    /// Removes every temporary this process still has (for an immediate exit on a second signal),
    /// or only those inside `folder`.
    public static func removeAllLive(in folder: String? = nil) {
        let prefix = folder.map { $0.hasSuffix("/") ? $0 : $0 + "/" }
        for path in live.withLock({ $0 }) where prefix.map({ path.hasPrefix($0) }) ?? true { unlink(path) }
    }

    /// Forgets a temporary removed by its pool.
    static func forget(_ path: String) {
        live.withLock { _ = $0.remove(path) }
    }

    /// fsyncs the folder of `path`, so a new name in it survives power loss too.
    static func syncFolder(of path: String) {
        let folder = (path as NSString).deletingLastPathComponent
        let descriptor = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    private static let live = Mutex<Set<String>>([])

    private static func randomName() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return String(high, radix: 16) + String(low, radix: 16)
    }
}
