import Digest
import Foundation
import POSIXKit
import Synchronization

/// Atomic, contained writes into one output folder.
///
/// Every file starts as a temporary, mode 0600: an unnamed one (`O_TMPFILE`) where the kernel and
/// the folder's file system allow it, which a killed run cannot leave behind, else a hidden
/// `.richpush-<random>.part`, created exclusively and never through a link. It is written in full,
/// then linked under its final name, which fails rather than replacing anything already there, and
/// the temporary (its name, if it has one) is removed. A failure at any point removes the temporary,
/// so a failed run leaves no file. Final names are made here, from
/// the content hash and a normalised extension: payload text never becomes part of a path.
///
/// Renaming (or linking) a fully written file makes every write atomic for readers and for a
/// crashed or killed process. With `durable`, each file is also fsync'ed before it gets its name,
/// which survives power loss too, at a cost of milliseconds per file.
package struct AttachmentStore: Sendable {
    /// The output folder, absolute.
    package let folder: String
    /// fsync every file before it is renamed or linked into place.
    package let durable: Bool
    /// Temporaries whose content was not kept (a failure, or a copy of a file already stored), truncated
    /// and reused: creating and deleting a file per payload is what a busy run would otherwise spend on.
    private let scratch = ScratchPool()
    /// The attachments this store linked into place, when asked to keep the list (see ``removeNewFiles()``).
    private let newFiles: PathList?
    /// Final files whose content this store wrote or checked, by name, with the identity they had
    /// then: a later commit of the same content trusts an unchanged file instead of hashing it again.
    private let checked = KnownFiles()
    /// The folders this store created (the output folder and missing parents), deepest first.
    private let madeFolders: [String]
    /// Temporaries are unnamed (`O_TMPFILE`) where the file system allows it; false takes the
    /// named path a file system without it gets (tests check that path with it).
    let unnamedTemporaries: Bool

    /// Uses `folder` (created if missing, with parents). With `recordsNewFiles`, the store keeps the
    /// list of files it adds, for ``removeNewFiles()`` (one command's run, not a large batch).
    package init(
        folder: String, durable: Bool = false, recordsNewFiles: Bool = false, unnamedTemporaries: Bool = true
    ) throws(StoreError) {
        self.durable = durable
        self.unnamedTemporaries = unnamedTemporaries
        self.newFiles = recordsNewFiles ? PathList() : nil
        let absolute =
            folder.hasPrefix("/") ? folder : FileManager.default.currentDirectoryPath + "/" + folder
        var missing: [String] = []
        var probe = URL(fileURLWithPath: absolute).standardizedFileURL.path
        var probed = stat()
        while probe != "/" && stat(probe, &probed) != 0 && errno == ENOENT {
            missing.append(probe)
            probe = (probe as NSString).deletingLastPathComponent
        }
        madeFolders = missing
        do { try SystemCall.makeFolders(absolute, operation: "create the output folder") } catch {
            throw StoreError.output(error)
        }
        var info = stat()
        guard stat(absolute, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, access(absolute, W_OK) == 0 else {
            throw StoreError.output("the output folder '\(folder)' is not a writable folder")
        }
        self.folder = URL(fileURLWithPath: absolute).standardizedFileURL.path
    }

    /// A named temporary file in the folder, empty and open for writing (a reused one when one is
    /// free), for a caller that links it by its name (``TemporaryFile/path``) itself.
    ///
    /// - Warning: give it a name only through ``commit(_:fileExtension:)``, or set
    ///   ``TemporaryFile/isLinked`` after linking it yourself: an unlinked one is emptied for reuse.
    package func makeTemporary() throws(StoreError) -> TemporaryFile {
        if let reused = scratch.take() { return reused }
        let created = try makeTemporary(inFolder: folder, unnamed: false)
        created.pool = scratch
        return created
    }

    /// A temporary for an attachment that ``commit(_:fileExtension:known:)`` names: a reused named one
    /// when the pool has one (nothing to create at all), else an unnamed one (`O_TMPFILE`: no name to
    /// create now or to remove after the link, and none left by a killed run), else a new named one.
    ///
    /// An unnamed temporary whose content is not kept is closed, not pooled: the pool holds named
    /// files only, since ``makeTemporary()``'s callers link theirs by name.
    package func makeAttachmentTemporary() throws(StoreError) -> TemporaryFile {
        if let reused = scratch.take() { return reused }
        do {
            if unnamedTemporaries, let unnamed = try TemporaryFile.createUnnamed(in: folder) { return unnamed }
        } catch {
            throw StoreError.output(error)
        }
        return try makeTemporary()
    }

    /// Removes the reusable temporaries now (they are also removed when the last copy of the store goes).
    package func removeScratch() {
        scratch.removeAll()
    }

    /// Removes the folders this store created that are still empty (a run that stored nothing
    /// leaves no empty output folder behind); a folder that holds anything stays.
    package func removeMadeFoldersIfEmpty() {
        for folder in madeFolders { _ = rmdir(folder) }
    }

    /// A new temporary file in `directory` (inside the store), created with its parents if missing.
    ///
    /// Temporaries live in the folder of the file they become, so the final rename or link stays
    /// inside one directory (a rename across directories takes a file-system-wide lock). They are
    /// unnamed where the file system allows it (``TemporaryFile/create(in:prefix:)``).
    package func makeTemporary(inFolder directory: String, unnamed: Bool = true) throws(StoreError) -> TemporaryFile {
        let unnamed = unnamed && unnamedTemporaries
        do {
            return try TemporaryFile.create(in: directory, prefix: ".richpush-", unnamed: unnamed)
        } catch  where error.code == ENOENT {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError.output(error)
        }
        do { return try TemporaryFile.create(in: directory, prefix: ".richpush-", unnamed: unnamed) } catch {
            throw StoreError.output(error)
        }
    }

    /// A new temporary name for an existing file in the same folder (a hard link), open for reading and writing.
    package func makeTemporary(linking path: String) throws(StoreError) -> TemporaryFile {
        var failure = SystemError(code: EEXIST, operation: "link '\(path)' into", path: folder)
        for _ in 0..<8 {
            let name = folder + "/.richpush-" + UUID().uuidString.lowercased() + ".part"
            do {
                try SystemCall.retrying("link '\(path)' into", path: folder) { link(path, name) }
            } catch {
                failure = error
                if error.code == EEXIST { continue }
                break
            }
            do {
                let descriptor = try SystemCall.retrying("open", path: name) {
                    open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
                }
                let temporary = TemporaryFile(path: name, descriptor: descriptor)
                temporary.isLinked = true
                return temporary
            } catch {
                unlink(name)
                throw StoreError.output(error)
            }
        }
        throw StoreError.output(failure)
    }

    /// Removes temporary files an interrupted or crashed run left in the folder or below it (`.richpush-*`).
    package func removeLeftovers() {
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return }
        while let name = walker.nextObject() as? String {
            if (name as NSString).lastPathComponent.hasPrefix(".richpush-") { unlink(folder + "/" + name) }
        }
    }

    /// Removes the files this store created (not the ones it found already stored), when the store
    /// was made with `recordsNewFiles`: a run that cannot deliver its output takes its attachments back.
    package func removeNewFiles() {
        for path in newFiles?.takeAll() ?? [] { unlink(path) }
    }

    /// Flushes `temporary`, hashes it, and links it as `<sha256 prefix>.<fileExtension>`.
    ///
    /// `fileExtension` must be a normalised attachment extension (checked: letters and digits only).
    /// When a file of that name already exists (stored by an earlier run) it is reused only if it is
    /// a regular file with exactly the same content; anything else is refused, since the outcome
    /// would otherwise report a hash the file does not have. The temporary is always removed.
    ///
    /// When the caller already knows the content's SHA-256 and size (hashed as the bytes arrived), pass
    /// them as `known`: the file is then not read back.
    package func commit(_ temporary: TemporaryFile, fileExtension: String, known: (sha256: String, bytes: Int64)? = nil)
        throws(StoreError) -> StoredFile
    {
        // For messages: an unnamed temporary has no name of its own to show.
        let path = temporary.isUnnamed ? folder : temporary.path
        defer { temporary.discard() }
        guard !fileExtension.isEmpty, fileExtension.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw StoreError.output("refusing to store under the extension '\(fileExtension)'")
        }
        do throws(SystemError) {
            if durable { try SystemCall.retrying("flush", path: path) { fsync(temporary.descriptor) } }
            let (hash, bytes): (String, Int64)
            if let known {
                (hash, bytes) = known
            } else {
                (hash, bytes) = try Self.hash(descriptor: temporary.descriptor, path: path)
            }
            let final = folder + "/" + String(hash.prefix(32)) + "." + fileExtension
            // Readable as the umask allows, like any file a tool makes: an uploader running as
            // another user must be able to read the attachments.
            _ = fchmod(temporary.descriptor, SystemCall.creationMode)
            do throws(SystemError) {
                try temporary.link(as: final)
                newFiles?.append(final)
                if durable { TemporaryFile.syncFolder(of: final) }
                checked.remember(final)
            } catch  where error.code == EEXIST {
                if !checked.isUnchanged(final) {
                    try Self.checkSameContent(final, hash: hash, bytes: bytes)
                    checked.remember(final)
                }
            }
            return StoredFile(path: final, bytes: bytes, sha256: hash)
        } catch {
            throw StoreError.output(error)
        }
    }

    /// Refuses an existing file at an attachment's final name unless it holds exactly the content
    /// with SHA-256 `hash`: a planted or damaged file must not be reported as the download.
    private static func checkSameContent(_ path: String, hash expected: String, bytes: Int64) throws(SystemError) {
        func refuse(_ why: String) -> SystemError {
            SystemError(
                code: EEXIST, operation: "store", path: path,
                reason: "a file is already there and \(why); remove it and run again")
        }
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw refuse("it is not a regular file")
        }
        guard Int64(info.st_size) == bytes else { throw refuse("its size differs from the download's") }
        let descriptor = try SystemCall.retrying("open", path: path) { open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) }
        defer { close(descriptor) }
        let (existing, existingBytes) = try hash(descriptor: descriptor, path: path)
        guard existing == expected, existingBytes == bytes else {
            throw refuse("its content differs from the download's (SHA-256 \(existing.prefix(16))…)")
        }
    }

    /// Writes `data` to `name` in the folder atomically (temporary, flush, rename over the old one).
    ///
    /// `name` may contain subfolders (created as needed) but no `..` and no leading `/`.
    package func writeAtomically(_ data: [UInt8], to name: String) throws(StoreError) -> String {
        let parts = name.split(separator: "/")
        guard !name.hasPrefix("/"), !parts.isEmpty, !parts.contains(where: { $0 == ".." || $0 == "." }) else {
            throw StoreError.output("refusing to write outside the output folder: '\(name)'")
        }
        let destination = folder + "/" + parts.joined(separator: "/")
        let temporary = try makeTemporary(inFolder: (destination as NSString).deletingLastPathComponent)
        defer { temporary.discard() }
        do throws(SystemError) {
            try SystemCall.writeAll(temporary.descriptor, data, path: destination)
            try temporary.commit(as: destination, durable: durable)
        } catch {
            throw StoreError.output(error)
        }
        return destination
    }

    private static func hash(descriptor: Int32, path: String) throws(SystemError) -> (String, Int64) {
        var digest = SHA256Digest()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var offset: Int64 = 0
        while true {
            let got = try buffer.withUnsafeMutableBytes { chunk in
                Result { () throws(SystemError) in
                    try SystemCall.preadAll(descriptor, into: chunk, offset: offset, path: path)
                }
            }.get()
            if got == 0 { break }
            buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[0..<got])) }
            offset += Int64(got)
        }
        guard let hex = digest.hex() else {
            throw SystemError(code: EIO, operation: "hash", path: path, reason: "libcrypto could not compute SHA-256")
        }
        return (hex, offset)
    }
}

/// Files whose content was written or checked, each with the identity it had then.
///
/// The identity is the device, inode, size, modification and status-change times: any write,
/// rename over or replacement changes at least one of them, and the status-change time cannot be set
/// back, so an unchanged identity means the content that was checked. (On kernels with coarse file
/// timestamps, a same-size rewrite within one clock tick of the check, a few milliseconds, would go
/// unseen; the check exists for files planted before a run, which it always hashes.)
final class KnownFiles: Sendable {
    private struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: timespec
        var changed: timespec

        static func == (a: Identity, b: Identity) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
                && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
        }
    }

    private let files = Mutex<[String: Identity]>([:])

    private static func identity(_ path: String) -> Identity? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Identity(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size), modified: info.st_mtim,
            changed: info.st_ctim)
    }

    /// Records `path` as it is now (its content was just written or checked).
    func remember(_ path: String) {
        guard let identity = Self.identity(path) else { return }
        files.withLock { files in
            // A bound: a run storing more distinct attachments than this checks the rest each time.
            if files.count >= 4096 { files.removeAll(keepingCapacity: true) }
            files[path] = identity
        }
    }

    /// Whether `path` is still the file that was remembered.
    func isUnchanged(_ path: String) -> Bool {
        guard let now = Self.identity(path) else { return false }
        return files.withLock { $0[path] } == now
    }
}
