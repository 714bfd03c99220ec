import Glibc
import Synchronization

/// Where temporaries whose content was not kept go back to, emptied, for another use.
///
/// A pool holds named temporaries only: a reused file keeps its `.part` name (see ``TemporaryFile``).
package protocol TemporaryFilePool: AnyObject, Sendable {
    /// Takes a temporary back, emptied; false when it cannot be reused (the caller removes it).
    func give(path: String, descriptor: Int32) -> Bool
}

/// A temporary file beside its destination: created exclusively, never through a link, mode 0600
/// while it is written; the file it becomes has the mode the umask gives (``SystemCall/creationMode``).
///
/// It is either *unnamed* (``create(in:prefix:)`` where the kernel and file system allow
/// `O_TMPFILE`: no name exists until the commit links one, so a killed process leaves nothing at all)
/// or *named* (``createExclusively(in:prefix:)``, `<prefix><random>.part`: random, so a planted file or
/// link at a predictable name redirects nothing; a killed process may leave it, and
/// ``removeAllLive()`` removes it on a second Ctrl-C).
///
/// It gets its final name by ``commit(as:durable:)`` (atomic for readers and for a killed process,
/// replacing only a regular file) or ``link(as:)`` (never replacing anything), or disappears by
/// ``discard()``, which every path must reach.
///
/// ```swift
/// let temporary = try TemporaryFile.create(in: "out", prefix: ".richpush-")
/// defer { temporary.discard() }
/// try SystemCall.writeAll(temporary.descriptor, bytes, path: temporary.path)
/// try temporary.commit(as: "out/report.json")
/// ```
///
/// Used by one task at a time, which is what makes the `@unchecked Sendable` sound.
package final class TemporaryFile: @unchecked Sendable {
    /// The file's name; for an unnamed file, `/proc/self/fd/<descriptor>`, which opens it too.
    package let path: String
    package let descriptor: Int32
    /// The file has no name of its own (`O_TMPFILE`) until a commit links one.
    package let isUnnamed: Bool
    /// Another name shares this file's content (it was linked or renamed into place, or made as a
    /// link): it must never be emptied, only its temporary name removed.
    package var isLinked = false
    /// The pool it returns to when its content is not kept (named temporaries only).
    package var pool: (any TemporaryFilePool)?
    private var discarded = false

    /// A named temporary already open at `path`, known to ``removeAllLive()`` from now on.
    package init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
        self.isUnnamed = false
        Self.live.withLock { _ = $0.insert(path) }
    }

    private init(unnamed descriptor: Int32) {
        self.path = "/proc/self/fd/\(descriptor)"
        self.descriptor = descriptor
        self.isUnnamed = true
    }

    /// Creates a new, empty temporary in `folder`, unnamed when the kernel and the folder's file
    /// system allow it (`O_TMPFILE`, and `/proc/self/fd` to link it by), otherwise named as
    /// ``createExclusively(in:prefix:)`` makes it. `unnamed: false` takes the named path at once
    /// (what a file system without `O_TMPFILE` gets; tests use it to check that path).
    package static func create(in folder: String, prefix: String = ".richpush-", unnamed: Bool = true)
        throws(SystemError) -> TemporaryFile
    {
        if unnamed, let file = try createUnnamed(in: folder) { return file }
        return try createExclusively(in: folder, prefix: prefix)
    }

    /// An unnamed temporary in `folder`, or nil when this kernel or file system cannot make one
    /// (EOPNOTSUPP, EISDIR or EINVAL from an old kernel, no `/proc`): then the caller makes a named one.
    package static func createUnnamed(in folder: String) throws(SystemError) -> TemporaryFile? {
        guard procIsMounted else { return nil }
        do throws(SystemError) {
            let descriptor = try SystemCall.open(
                folder, Self.unnamedFlag | O_RDWR | O_CLOEXEC, mode: 0o600, operation: "create a temporary file in")
            return TemporaryFile(unnamed: descriptor)
        } catch  where error.code == EOPNOTSUPP || error.code == EISDIR || error.code == EINVAL {
            return nil
        }
    }

    /// `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY` in Linux's `fcntl.h`), which Swift does not import.
    static let unnamedFlag: Int32 = 0o20_000_000 | O_DIRECTORY

    /// Whether `/proc/self/fd` is there to give an unnamed file a name by `linkat`.
    private static let procIsMounted: Bool = access("/proc/self/fd", X_OK) == 0

    /// Creates a new, empty temporary in `folder`: `O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600, random name.
    package static func createExclusively(in folder: String, prefix: String = ".richpush-") throws(SystemError)
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
    /// flushed to disk first and after. The file gets `mode` (by default what any tool's new file gets).
    /// With `replacingLinks`, a symbolic link there is replaced as `rename(2)` replaces it (the link
    /// goes, what it leads to is untouched): for files only richpush writes, such as a batch's results.
    ///
    /// A named file is renamed; an unnamed one is linked, or, when a file is already there, linked
    /// under a random temporary name that is then renamed over it, so readers see the old file or the
    /// new one, never neither.
    package func commit(
        as destination: String, durable: Bool = false, mode: mode_t = SystemCall.creationMode,
        replacingLinks: Bool = false
    ) throws(SystemError) {
        var info = stat()
        if lstat(destination, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG
            && !(replacingLinks && (info.st_mode & S_IFMT) == S_IFLNK)
        {
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
        // By default the mode any tool's new file gets (0666 less the umask), not the temporary's 0600.
        if mode != 0o600 { _ = fchmod(descriptor, mode) }
        if durable { try SystemCall.retrying("flush", path: path) { fsync(descriptor) } }
        if isUnnamed {
            try commitUnnamed(as: destination)
        } else {
            try SystemCall.retrying("rename a temporary file to", path: destination) { rename(path, destination) }
            Self.live.withLock { _ = $0.remove(path) }
        }
        isLinked = true
        if durable { Self.syncFolder(of: destination) }
    }

    /// Links the unnamed file as `destination`, over a regular file already there.
    private func commitUnnamed(as destination: String) throws(SystemError) {
        do throws(SystemError) {
            try link(as: destination)
            return
        } catch  where error.code == EEXIST {
            // Checked above to be a regular file or an allowed link (or gone since): replace it atomically
            // by a rename.
        }
        let folder = Self.folder(of: destination)
        var failure = SystemError(code: EEXIST, operation: "create a temporary file in", path: folder)
        for _ in 0..<8 {
            let name = folder + "/.richpush-" + Self.randomName() + ".part"
            do throws(SystemError) {
                try link(as: name)
            } catch {
                failure = error
                if error.code == EEXIST { continue }
                throw error
            }
            // Known while it has a name, so a second Ctrl-C removes it too.
            Self.live.withLock { _ = $0.insert(name) }
            defer { Self.live.withLock { _ = $0.remove(name) } }
            do throws(SystemError) {
                try SystemCall.retrying("rename a temporary file to", path: destination) { rename(name, destination) }
                return
            } catch {
                unlink(name)
                throw error
            }
        }
        throw failure
    }

    /// Gives the file the additional name `destination`, failing with EEXIST when anything is
    /// there (nothing is replaced). The temporary name, if any, is removed by ``discard()``.
    package func link(as destination: String) throws(SystemError) {
        if isUnnamed {
            try SystemCall.retrying("store", path: destination) {
                linkat(AT_FDCWD, path, AT_FDCWD, destination, AT_SYMLINK_FOLLOW)
            }
        } else {
            try SystemCall.retrying("store", path: destination) { Glibc.link(path, destination) }
        }
        isLinked = true
    }

    /// Ends this use of the file: back to its pool, emptied, if it can be; otherwise closed and its
    /// temporary name removed (after a commit only the descriptor is closed). Idempotent.
    package func discard() {
        guard !discarded else { return }
        discarded = true
        if !isLinked, !isUnnamed, let pool, pool.give(path: path, descriptor: descriptor) { return }
        close(descriptor)
        if !isUnnamed && Self.live.withLock({ $0.remove(path) != nil }) { unlink(path) }
    }

    deinit { discard() }

    /// Removes every named temporary this process still has (for an immediate exit on a second
    /// signal), or only those inside `folder`. Unnamed ones need nothing: they vanish with the process.
    package static func removeAllLive(in folder: String? = nil) {
        let prefix = folder.map { $0.hasSuffix("/") ? $0 : $0 + "/" }
        for path in live.withLock({ $0 }) where prefix.map({ path.hasPrefix($0) }) ?? true { unlink(path) }
    }

    /// Forgets a temporary removed by its pool.
    package static func forget(_ path: String) {
        live.withLock { _ = $0.remove(path) }
    }

    /// fsyncs the folder of `path`, so a new name in it survives power loss too.
    package static func syncFolder(of path: String) {
        let descriptor = open(folder(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// The folder part of `path` (`.` for a bare name, `/` for a name in the root).
    package static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let folder = path[..<slash]
        return folder.isEmpty ? "/" : String(folder)
    }

    private static let live = Mutex<Set<String>>([])

    /// 32 random hexadecimal digits.
    package static func randomName() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return String(high, radix: 16) + String(low, radix: 16)
    }
}
