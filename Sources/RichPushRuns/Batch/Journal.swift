import Foundation
import POSIXKit
import RichPush
import Synchronization

/// The batch's resume state: NDJSON records on an ``AppendLog`` (the one append-only log: a torn
/// last line cut off at open, appends whole or cut back), read through its own read-only descriptor.
///
/// A batch groups its appends (``Grouping/batch``): records wait in memory and go out in one write
/// of up to 64 records, at the latest a quarter of a second after the first of them (checked as
/// records arrive) and at ``flush()``, which the run calls before it ends, also when interrupted.
/// The guarantees are the same, per group: a group is written whole or cut back, and a kill loses
/// at most the records not yet written, whose payloads a resume processes again (as it does a
/// payload killed between its output and its record).
final class Journal: Sendable {
    /// When appends are written: at once (``none``) or grouped.
    struct Grouping: Sendable {
        /// Records in one write at most.
        var records: Int
        /// Bytes that make a group go out early.
        var bytes: Int
        /// The longest a record waits for its group, checked at each append.
        var delay: Duration

        /// Every record written by its own append.
        static let none = Grouping(records: 1, bytes: 0, delay: .zero)
        /// A batch's: 64 records, 64 KiB or 250 ms, whichever comes first.
        static let batch = Grouping(records: 64, bytes: 64 * 1024, delay: .milliseconds(250))
    }

    /// The records waiting for their group.
    private struct Pending {
        var bytes: [UInt8] = []
        var records = 0
        var first: ContinuousClock.Instant?
    }

    /// Writes bytes to a descriptor: the count written, or -1 with `errno` set (the shape of write(2)).
    typealias Write = AppendLog.Write

    /// write(2).
    static let systemWrite: Write = AppendLog.systemWrite

    let path: String
    private let log: AppendLog
    private let grouping: Grouping
    /// Appends and writes run one at a time under this lock.
    private let pending: Mutex<Pending>

    init(path: String, write: @escaping Write = Journal.systemWrite, grouping: Grouping = .none) throws(StoreError) {
        self.path = path
        self.grouping = grouping
        let folder = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        do { log = try AppendLog(path: path, write: write) } catch { throw StoreError.output(error) }
        pending = Mutex(Pending())
    }

    /// Appends one record (which must end with a newline), whole or not at all: now, or with its
    /// group (see ``Grouping``). A failed write fails the append that made it, and drops its group.
    func append(_ line: [UInt8]) throws(StoreError) {
        let failure = pending.withLock { pending -> StoreError? in
            let now = ContinuousClock.now
            pending.bytes += line
            pending.records += 1
            let first = pending.first ?? now
            pending.first = first
            guard
                pending.records >= grouping.records || pending.bytes.count >= grouping.bytes
                    || now - first >= grouping.delay
            else { return nil }
            return writePending(&pending)
        }
        if let failure { throw failure }
    }

    /// Writes the records still waiting for their group.
    func flush() throws(StoreError) {
        let failure = pending.withLock { pending -> StoreError? in
            pending.bytes.isEmpty ? nil : writePending(&pending)
        }
        if let failure { throw failure }
    }

    /// Writes the waiting records in one append, whole or cut back to the length before it.
    private func writePending(_ pending: inout Pending) -> StoreError? {
        let group = pending.bytes
        pending = Pending()
        do throws(AppendLog.Failure) {
            try log.append(group, sync: false)
            return nil
        } catch {
            var message = "cannot append to '\(path)': \(error.error.cause)"
            if let cutBack = error.cutBack { message += "; and cannot cut the partial record off: \(cutBack.cause)" }
            return StoreError.output(
                message + ". Free some space and run the same command again to resume.", error.error)
        }
    }

    /// Calls `body` with each complete line (without its newline) and its 0-based number.
    func forEachLine(_ body: (Int, [UInt8]) throws -> Void) throws(StoreError) {
        try Self.forEachLine(inFile: path, body)
    }

    /// Calls `body` with each complete line of the file at `path` (without its newline) and its 0-based
    /// number, reading in blocks through a read-only descriptor; a last line without a newline (torn) is skipped.
    static func forEachLine(inFile path: String, _ body: (Int, [UInt8]) throws -> Void) throws(StoreError) {
        try forEachLine(inFile: path) { number, _, line in try body(number, line) }
    }

    /// As ``forEachLine(inFile:_:)-swift.type.method``, with each line's byte offset in the file.
    static func forEachLine(inFile path: String, _ body: (Int, off_t, [UInt8]) throws -> Void) throws(StoreError) {
        try AppendLog.forEachLine(inFile: path, body)
    }

    /// The `length` bytes at `offset` of the file open as `descriptor` (a line found by
    /// ``forEachLine(inFile:_:)-swift.type.method``).
    static func bytes(of descriptor: Int32, at offset: off_t, length: Int, path: String) throws(StoreError) -> [UInt8] {
        let bytes: [UInt8]
        do { bytes = try SystemCall.preadAll(descriptor, count: length, offset: Int64(offset), path: path) } catch {
            throw StoreError.output(error)
        }
        guard bytes.count == length else {
            throw StoreError.output(SystemError(code: EIO, operation: "read", path: path, reason: "it got shorter"))
        }
        return bytes
    }

    /// The `input_sha256` of each input's last record; inputs whose last record has none, or is in
    /// the shape of an older version (see ``isCurrentShape(_:)``), are left out, so they are redone.
    func lastDigests() throws(StoreError) -> [String: String] {
        var digests: [String: String] = [:]
        try forEachLine { _, line in
            if let input = Self.input(of: line) {
                digests[input] = Self.isCurrentShape(line) && !Self.isRetried(line) ? Self.inputSha256(of: line) : nil
            }
        }
        return digests
    }

    /// Whether a record's verdict says nothing about the payload and is redone on resume: the client
    /// ran out of file descriptors (`too-many-open-files`).
    static func isRetried(_ line: [UInt8]) -> Bool {
        string("reason", of: line) == ReasonCode.tooManyOpenFiles.rawValue
    }

    private static func contains(_ line: [UInt8], _ key: [UInt8]) -> Bool {
        guard line.count >= key.count else { return false }
        return (0...(line.count - key.count)).contains { line[$0..<($0 + key.count)].elementsEqual(key) }
    }

    /// Whether a record line is in the current JSON vocabulary: it has the top-level `elapsed_ms`.
    ///
    /// Records of versions before the one vocabulary (`elapsed_milliseconds`, `timings_milliseconds`)
    /// lack it; their payloads are processed again, so `results.ndjson` ends up in one shape. A quote
    /// inside a string value is escaped, so `"elapsed_ms":` is found only as a key.
    static func isCurrentShape(_ line: [UInt8]) -> Bool {
        contains(line, Array("\"elapsed_ms\":".utf8))
    }

    /// Readies the journal at `path` for a run, before it is opened: a new empty journal when `fresh`
    /// (a forced run), otherwise the last record of each input in `current`, when it holds more lines.
    ///
    /// The replacement is created exclusively in the journal's folder and renamed over it, so killed
    /// forced runs and resumes leave at most one record per payload plus the current run's.
    static func prepare(path: String, fresh: Bool, keeping current: Set<String>, store: AttachmentStore)
        throws(StoreError)
    {
        var last: [String: Int] = [:]
        if !fresh {
            guard FileManager.default.fileExists(atPath: path) else { return }
            var lines = 0
            try forEachLine(inFile: path) { number, line in
                lines += 1
                if let input = input(of: line), current.contains(input) { last[input] = number }
            }
            guard lines > last.count else { return }
        }
        let replacement = try store.makeTemporary(inFolder: (path as NSString).deletingLastPathComponent)
        defer { replacement.discard() }
        var failure: SystemError?
        if !fresh {
            try forEachLine(inFile: path) { number, line in
                guard let input = input(of: line), last[input] == number else { return }
                if failure == nil {
                    failure = BatchRunner.write(line + [UInt8(ascii: "\n")], to: replacement.descriptor)
                }
            }
        }
        if let failure { throw StoreError.output(SystemError(code: failure.code, operation: "rewrite", path: path)) }
        do { try replacement.commit(as: path, durable: store.durable, mode: 0o600, replacingLinks: true) } catch {
            throw StoreError.output(
                SystemError(code: error.code, operation: "rewrite", path: path, reason: error.reason))
        }
    }

    /// Replaces the journal with the (complete) file `replacement`, by renaming it over the journal.
    ///
    /// This object's descriptor keeps pointing at the old file: call this last.
    func replace(with replacement: TemporaryFile, durable: Bool) throws(StoreError) {
        do { try replacement.commit(as: path, durable: durable, mode: 0o600, replacingLinks: true) } catch {
            throw StoreError.output(
                SystemError(code: error.code, operation: "compact", path: path, reason: error.reason))
        }
    }

    /// The `input` field of a record line, read without decoding the whole record.
    static func input(of line: [UInt8]) -> String? { string("input", of: line) }

    /// The `input_sha256` field of a record line (nil in records written before it existed).
    static func inputSha256(of line: [UInt8]) -> String? { string("input_sha256", of: line) }

    /// A top-level string field of a record line, read without decoding the whole record.
    ///
    /// Records are written by richpush, where `"KEY":` only ever appears as that key (a quote
    /// inside a string value is escaped), so finding it and reading the string after it is enough.
    static func string(_ key: String, of line: [UInt8]) -> String? {
        let key = Array("\"\(key)\":\"".utf8)
        guard line.count > key.count,
            let start = (0...(line.count - key.count)).first(where: { line[$0..<($0 + key.count)].elementsEqual(key) })
        else { return nil }
        var end = start + key.count
        while end < line.count && line[end] != UInt8(ascii: "\"") {
            end += line[end] == UInt8(ascii: "\\") ? 2 : 1
        }
        guard end < line.count,
            case .string(let value) = try? JSONValue.parse(Array(line[(start + key.count - 1)...end]))
        else { return nil }
        return value
    }
}
