import Foundation
import POSIXKit
import RichPush

/// The outbox file as an append-only log of changes (``OutboxChange``), compacted now and then, so
/// a flush's I/O per request stays the same however many items the outbox holds.
///
/// The file starts with a header line and usually a snapshot; every change after that is one line
/// appended to an ``AppendLog`` (the one append-only log, the batch journal's too) with a single
/// `write(2)` and synced before the flush goes on: what is on disk before a request is sent says
/// which items it carries, and what is on disk after its answer says how it went. A kill in the
/// middle of an append leaves a last line without its newline: that torn line is ignored as an
/// append that never happened (the state before it is complete and safe), and the log cuts it off
/// when it is next opened for appending; an append that fails part-way is cut back at once. A line
/// that is not a change anywhere else, or a log without its header, makes the file unusable
/// (``AnalyticsError/Code/outboxUnreadable``).
///
/// Compaction writes the header and one snapshot to an exclusive temporary and renames it over the
/// log (synced, folder included): when the lines appended since the last compaction pass
/// ``compactionFactor`` times the size of that snapshot (at least ``compactionFloor`` bytes), and at
/// the end of a flush when the log is more than twice what a snapshot would be. The bytes rewritten
/// are then paid for by the appends before them, so they stay a constant share per request. An
/// outbox with nothing left is removed.
///
/// ```swift
/// let log = try OutboxLog.open(suite.outboxPath)       // under the flush lock
/// try log.append(.sending(ids: ["k3x-0", "k3x-1"]))    // synced before the request goes
/// try log.finish()
/// ```
final class OutboxLog {
    /// The state the log holds now.
    private(set) var outbox: Outbox
    let path: String
    /// Every byte this value wrote to the file (appends and compactions), for tests.
    private(set) var bytesWritten = 0
    /// The size of the file now (0: there is none).
    private(set) var fileBytes = 0
    /// The size of the last snapshot written, and what was appended since.
    private var snapshotBytes = 0
    private var appendedBytes = 0
    /// The log opened for appending; nil until the first append (or after a compaction).
    private var log: AppendLog?
    /// Whether the file may hold a line the outbox does not (an append whose fragment could not be cut
    /// off): the next change rewrites it from ``outbox`` instead of appending.
    private var needsRewrite = false

    /// Appended bytes past this many times the last snapshot start a compaction.
    static let compactionFactor = 4
    /// ... and past this many bytes at least (a small outbox is not rewritten every few requests).
    static let compactionFloor = 256 << 10
    /// The largest outbox file read.
    static let maximumBytes = 256 << 20

    private init(path: String, read: Read?) {
        self.path = path
        outbox = read?.outbox ?? Outbox()
        fileBytes = read?.validBytes ?? 0
        snapshotBytes = read?.validBytes ?? 0
    }

    /// Opens the log at `path` for a flush (the caller holds the flush lock), an empty one when there is none.
    static func open(_ path: String) throws(AnalyticsError) -> OutboxLog {
        OutboxLog(path: path, read: try read(path))
    }

    /// Appends `change` (synced), then applies it; removes the file when nothing is left.
    func append(_ change: OutboxChange) throws(AnalyticsError) {
        var next = outbox
        next.apply(change)
        if next.isEmpty {
            outbox = next
            try remove()
            return
        }
        if fileBytes == 0 || needsRewrite {
            outbox = next
            try compact()
            return
        }
        let line = try change.line
        do throws(AppendLog.Failure) {
            if log == nil {
                // Opening cuts a torn last line off, so the change starts on a line of its own. The
                // file exists (it was written whole first): an outbox removed meanwhile is not remade
                // without its header.
                do throws(SystemError) { log = try AppendLog(path: path, create: false) } catch {
                    throw AppendLog.Failure(error: error, written: 0)
                }
                fileBytes = Int(log?.length ?? 0)
            }
            try log?.append(line, sync: true)
        } catch {
            // Cut back, or never begun: the log holds what it held before, unless the cut failed.
            log = nil
            var message = error.error.message
            if let cutBack = error.cutBack {
                needsRewrite = true
                message +=
                    "; and the partial change could not be cut off (\(cutBack.cause)): the next change rewrites the outbox"
            }
            throw AnalyticsError(.storage, message)
        }
        outbox = next
        bytesWritten += line.count
        fileBytes += line.count
        appendedBytes += line.count
        if appendedBytes > max(Self.compactionFloor, Self.compactionFactor * snapshotBytes) { try compact() }
    }

    /// Compacts when the log is more than twice a snapshot (the end of a flush), and closes the file.
    func finish() throws(AnalyticsError) {
        defer { log = nil }
        guard !outbox.isEmpty, fileBytes > 0 else { return }
        let snapshot = try Self.snapshotBytes(outbox)
        if needsRewrite || fileBytes > 2 * snapshot.count { try write(snapshot) }
    }

    /// Rewrites the file as the header and a snapshot of ``outbox``.
    func compact() throws(AnalyticsError) {
        try write(try Self.snapshotBytes(outbox))
    }

    private func write(_ bytes: [UInt8]) throws(AnalyticsError) {
        log = nil
        try Self.replaceFile(path, bytes)
        needsRewrite = false
        bytesWritten += bytes.count
        fileBytes = bytes.count
        snapshotBytes = bytes.count
        appendedBytes = 0
    }

    private func remove() throws(AnalyticsError) {
        log = nil
        if unlink(path) != 0 && errno != ENOENT {
            throw AnalyticsError(.storage, SystemError.current("remove", path: path).message)
        }
        fileBytes = 0
        snapshotBytes = 0
        appendedBytes = 0
    }

    // MARK: - The file

    /// Replaces the file at `path` with a log of `outbox` alone (removes it when `outbox` is empty).
    static func replace(_ path: String, with outbox: Outbox) throws(AnalyticsError) {
        if outbox.isEmpty {
            if unlink(path) != 0 && errno != ENOENT {
                throw AnalyticsError(.storage, SystemError.current("remove", path: path).message)
            }
            return
        }
        try replaceFile(path, try snapshotBytes(outbox))
    }

    private static func snapshotBytes(_ outbox: Outbox) throws(AnalyticsError) -> [UInt8] {
        try OutboxChange.header(version: OutboxChange.version).line + OutboxChange.snapshot(outbox).line
    }

    /// An exclusive temporary in the outbox's folder (unnamed where the file system allows it), synced
    /// and renamed or linked over it (the folder synced too).
    private static func replaceFile(_ path: String, _ bytes: [UInt8]) throws(AnalyticsError) {
        let folder = (path as NSString).deletingLastPathComponent
        do throws(SystemError) {
            let temporary = try TemporaryFile.create(in: folder.isEmpty ? "." : folder, prefix: ".richpush-")
            defer { temporary.discard() }
            try SystemCall.writeAll(temporary.descriptor, bytes, path: path)
            try temporary.commit(as: path, durable: true)
        } catch {
            throw AnalyticsError(.storage, error.message)
        }
    }

    /// What a file held.
    struct Read {
        var outbox: Outbox
        /// The bytes up to the end of the last complete line.
        var validBytes: Int
        /// The bytes of a torn last line, ignored.
        var tornBytes: Int
    }

    /// Reads the outbox file at `path`; nil when there is none.
    static func read(_ path: String) throws(AnalyticsError) -> Read? {
        let descriptor: Int32
        do {
            descriptor = try SystemCall.openRegularFile(path)
        } catch {
            if error.code == ENOENT { return nil }
            // A FIFO, device or folder where the outbox should be is an unreadable outbox, not a disk failure.
            if error.reason != nil { throw unusable(path, "it is not a regular file (a FIFO, device or folder)") }
            throw AnalyticsError(.storage, error.message)
        }
        defer { close(descriptor) }
        let bytes: [UInt8]
        do {
            bytes = try SystemCall.readAll(descriptor, upTo: maximumBytes + 1, path: path)
        } catch {
            throw AnalyticsError(.storage, error.message)
        }
        guard bytes.count <= maximumBytes else {
            throw unusable(path, "it is larger than \(maximumBytes) bytes")
        }
        return try parse(bytes, path: path)
    }

    /// The outbox `bytes` hold: a log, a torn last line ignored.
    static func parse(_ bytes: [UInt8], path: String) throws(AnalyticsError) -> Read {
        if bytes.isEmpty { return Read(outbox: Outbox(), validBytes: 0, tornBytes: 0) }
        guard let end = bytes.lastIndex(of: 0x0a) else {
            // No complete line: the log's header is written whole (by a rename), so this is not one.
            throw unusable(path, "it is not an outbox log: it has no complete line")
        }
        var outbox = Outbox()
        var lineNumber = 0
        for line in bytes[..<end].split(separator: 0x0a, omittingEmptySubsequences: false) {
            lineNumber += 1
            guard let change = OutboxChange(line: line) else {
                throw unusable(path, "line \(lineNumber) is not a change of the outbox")
            }
            if lineNumber == 1 {
                guard change == .header(version: OutboxChange.version) else {
                    throw unusable(
                        path, "its first line is not the header of an outbox log (version \(OutboxChange.version))")
                }
            } else if case .header = change {
                throw unusable(path, "line \(lineNumber) is a second header")
            }
            outbox.apply(change)
        }
        return Read(outbox: outbox, validBytes: end + 1, tornBytes: bytes.count - end - 1)
    }

    private static func unusable(_ path: String, _ reason: String) -> AnalyticsError {
        AnalyticsError(
            .outboxUnreadable,
            "'\(path)' is not an outbox this richpush wrote (\(reason)); move it aside to inspect it (its items "
                + "were claimed from the suite and are not in it any more)")
    }
}
