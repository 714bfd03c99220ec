import Foundation
import Synchronization

/// A file written into the output folder: where it is and what it holds.
public struct StoredFile: Sendable, Codable, Equatable {
    /// The absolute path.
    public var path: String
    /// Its size in bytes.
    public var bytes: Int64
    /// SHA-256 of its content, lower-case hex.
    public var sha256: String
}

/// Why something could not be stored.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public var message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Atomic, contained writes into one output folder.
///
/// Every file starts as a hidden temporary (`.richpush-<random>.part`), created exclusively and
/// never through a link, mode 0600. It is written in full, then linked under its final name, which
/// fails rather than replacing anything already there, and the temporary is removed. A failure at
/// any point removes the temporary, so a failed run leaves no file. Final names are made here, from
/// the content hash and a normalised extension: payload text never becomes part of a path.
///
/// Renaming (or linking) a fully written file makes every write atomic for readers and for a
/// crashed or killed process. With `durable`, each file is also fsync'ed before it gets its name,
/// which survives power loss too, at a cost of milliseconds per file.
public struct AttachmentStore: Sendable {
    /// The output folder, absolute.
    public let folder: String
    /// fsync every file before it is renamed or linked into place.
    public let durable: Bool
    /// Temporaries whose content was not kept (a failure, or a copy of a file already stored), truncated
    /// and reused: creating and deleting a file per payload is what a busy run would otherwise spend on.
    private let scratch = ScratchPool()

    /// Uses `folder` (created if missing, with parents).
    public init(folder: String, durable: Bool = false) throws(StoreError) {
        self.durable = durable
        let absolute =
            folder.hasPrefix("/") ? folder : FileManager.default.currentDirectoryPath + "/" + folder
        do {
            try FileManager.default.createDirectory(atPath: absolute, withIntermediateDirectories: true)
        } catch {
            throw StoreError("cannot create the output folder '\(folder)': \(error.localizedDescription)")
        }
        var info = stat()
        guard stat(absolute, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, access(absolute, W_OK) == 0 else {
            throw StoreError("the output folder '\(folder)' is not a writable folder")
        }
        self.folder = URL(fileURLWithPath: absolute).standardizedFileURL.path
    }

    /// A temporary file in the folder, empty and open for writing (a reused one when one is free).
    ///
    /// - Warning: give it a name only through ``commit(_:fileExtension:)``, or set
    ///   ``TemporaryFile/isLinked`` after linking it yourself: an unlinked one is emptied for reuse.
    public func makeTemporary() throws(StoreError) -> TemporaryFile {
        if let reused = scratch.take() { return reused }
        let created = try makeTemporary(inFolder: folder)
        created.pool = scratch
        return created
    }

    /// Removes the reusable temporaries now (they are also removed when the last copy of the store goes).
    public func removeScratch() {
        scratch.removeAll()
    }

    /// A new temporary file in `directory` (inside the store), created with its parents if missing.
    ///
    /// Temporaries live in the folder of the file they become, so the final rename stays inside one
    /// directory (a rename across directories takes a file-system-wide lock).
    func makeTemporary(inFolder directory: String) throws(StoreError) -> TemporaryFile {
        for attempt in 0..<8 {
            let path = directory + "/.richpush-" + UUID().uuidString.lowercased() + ".part"
            let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if descriptor >= 0 { return TemporaryFile(path: path, descriptor: descriptor) }
            if errno == ENOENT && attempt == 0 {
                try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                continue
            }
            if errno != EEXIST { break }
        }
        throw StoreError("cannot create a file in '\(directory)': \(String(cString: strerror(errno)))")
    }

    /// A new temporary name for an existing file in the same folder (a hard link), open for reading and writing.
    public func makeTemporary(linking path: String) throws(StoreError) -> TemporaryFile {
        for _ in 0..<8 {
            let name = folder + "/.richpush-" + UUID().uuidString.lowercased() + ".part"
            if link(path, name) == 0 {
                let descriptor = open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
                guard descriptor >= 0 else {
                    unlink(name)
                    break
                }
                let temporary = TemporaryFile(path: name, descriptor: descriptor)
                temporary.isLinked = true
                return temporary
            }
            if errno != EEXIST { break }
        }
        throw StoreError("cannot link '\(path)' in '\(folder)': \(String(cString: strerror(errno)))")
    }

    /// Removes temporary files an interrupted or crashed run left in the folder or below it (`.richpush-*`).
    public func removeLeftovers() {
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return }
        while let name = walker.nextObject() as? String {
            if (name as NSString).lastPathComponent.hasPrefix(".richpush-") { unlink(folder + "/" + name) }
        }
    }

    /// Flushes `temporary`, hashes it, and links it as `<sha256 prefix>.<fileExtension>`.
    ///
    /// `fileExtension` must be a normalised attachment extension (checked: letters and digits only).
    /// When a file of that name already exists with the same size (the same content stored by an
    /// earlier run) it is reused. The temporary is always removed.
    public func commit(_ temporary: TemporaryFile, fileExtension: String) throws(StoreError) -> StoredFile {
        let path = temporary.path
        defer { temporary.discard() }
        guard !fileExtension.isEmpty, fileExtension.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw StoreError("refusing to store under the extension '\(fileExtension)'")
        }
        guard !durable || fsync(temporary.descriptor) == 0 else {
            throw StoreError("cannot flush '\(path)': \(String(cString: strerror(errno)))")
        }
        let (hash, bytes) = try Self.hash(descriptor: temporary.descriptor)
        let final = folder + "/" + String(hash.prefix(32)) + "." + fileExtension
        if link(path, final) == 0 {
            temporary.isLinked = true
            if durable { Self.syncFolder(folder) }
        } else {
            guard errno == EEXIST else {
                throw StoreError("cannot store '\(final)': \(String(cString: strerror(errno)))")
            }
            var info = stat()
            guard lstat(final, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int64(info.st_size) == bytes else {
                throw StoreError("'\(final)' exists and is not the same file; remove it and run again")
            }
        }
        return StoredFile(path: final, bytes: bytes, sha256: hash)
    }

    /// Writes `data` to `name` in the folder atomically (temporary, flush, rename over the old one).
    ///
    /// `name` may contain subfolders (created as needed) but no `..` and no leading `/`.
    public func writeAtomically(_ data: [UInt8], to name: String) throws(StoreError) -> String {
        let parts = name.split(separator: "/")
        guard !name.hasPrefix("/"), !parts.isEmpty, !parts.contains(where: { $0 == ".." || $0 == "." }) else {
            throw StoreError("refusing to write outside the output folder: '\(name)'")
        }
        let destination = folder + "/" + parts.joined(separator: "/")
        let temporary = try makeTemporary(inFolder: (destination as NSString).deletingLastPathComponent)
        let path = temporary.path
        defer { temporary.discard() }
        let written = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let n = write(temporary.descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
        guard written, !durable || fsync(temporary.descriptor) == 0, rename(path, destination) == 0 else {
            throw StoreError("cannot write '\(destination)': \(String(cString: strerror(errno)))")
        }
        if durable { Self.syncFolder((destination as NSString).deletingLastPathComponent) }
        return destination
    }

    /// fsyncs a folder, so a new name in it survives power loss too.
    private static func syncFolder(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    private static func hash(descriptor: Int32) throws(StoreError) -> (String, Int64) {
        var digest = SHA256Digest()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var offset: off_t = 0
        while true {
            let got = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, offset) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else {
                throw StoreError("cannot read back a stored file: \(String(cString: strerror(errno)))")
            }
            if got == 0 { break }
            buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[0..<got])) }
            offset += off_t(got)
        }
        guard let hex = digest.hex() else { throw StoreError("libcrypto could not compute SHA-256") }
        return (hex, Int64(offset))
    }
}

/// A temporary file in the output folder; removed (or, when it came from a store's pool, emptied
/// for reuse) by ``discard()``, which every path must reach.
///
/// Used by one task at a time, which is what makes the `@unchecked Sendable` sound.
public final class TemporaryFile: @unchecked Sendable {
    public let path: String
    public let descriptor: Int32
    /// Another name shares this file's content (it was linked into place, or made as a link): it must
    /// never be emptied, only its temporary name removed.
    public var isLinked = false
    /// The pool it returns to when its content is not kept.
    var pool: ScratchPool?
    private var discarded = false

    init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Ends this use of the file: back to its pool, emptied, if it can be; otherwise closed and its
    /// temporary name removed (after a commit only the name goes). Idempotent.
    public func discard() {
        guard !discarded else { return }
        discarded = true
        if !isLinked, let pool, pool.give(path: path, descriptor: descriptor) { return }
        close(descriptor)
        unlink(path)
    }

    deinit { discard() }
}

/// Reusable temporary files of one store (see ``AttachmentStore``).
final class ScratchPool: Sendable {
    private let files = Mutex<[(path: String, descriptor: Int32)]>([])
    private let capacity = 256

    /// A free temporary, re-armed for a new use.
    func take() -> TemporaryFile? {
        guard let file = files.withLock({ $0.popLast() }) else { return nil }
        let temporary = TemporaryFile(path: file.path, descriptor: file.descriptor)
        temporary.pool = self
        return temporary
    }

    /// Takes a temporary back, emptied; false when it cannot be reused (the caller removes it).
    func give(path: String, descriptor: Int32) -> Bool {
        guard ftruncate(descriptor, 0) == 0, lseek(descriptor, 0, SEEK_SET) == 0 else { return false }
        return files.withLock { files in
            guard files.count < capacity else { return false }
            files.append((path, descriptor))
            return true
        }
    }

    func removeAll() {
        let all = files.withLock { files in
            defer { files.removeAll() }
            return files
        }
        for file in all {
            close(file.descriptor)
            unlink(file.path)
        }
    }

    deinit { removeAll() }
}
