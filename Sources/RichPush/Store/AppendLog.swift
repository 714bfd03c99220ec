import Foundation
import POSIXKit
import Synchronization

/// An append-only file of lines: the one mechanism under the batch journal and the analytics outbox.
///
/// Opening it cuts off a last line without its newline (a write a crash tore), so the next append
/// starts on a line of its own. An append is one write of whole lines, whole or not at all: a write
/// that fails part-way (a full disk) is cut back to the length before it. Readers see complete lines
/// only (``forEachLine(inFile:_:)``). Compaction is the caller's: it writes the lines to keep into an
/// exclusive temporary and renames it over the log (``TemporaryFile/commit(as:durable:mode:replacingLinks:)``),
/// then opens the log again.
///
/// ```swift
/// let log = try AppendLog(path: ".richpush/journal.ndjson")
/// try log.append(Array("{\"input\":\"a.json\"}\n".utf8), sync: false)
/// ```
package final class AppendLog: Sendable {
    /// Writes bytes to a descriptor: the count written, or -1 with `errno` set (the shape of write(2)).
    package typealias Write = @Sendable (Int32, UnsafeRawBufferPointer) -> Int

    /// write(2).
    package static let systemWrite: Write = { descriptor, buffer in
        Glibc.write(descriptor, buffer.baseAddress, buffer.count)
    }

    /// An append that failed: the system call, and whether the fragment it left could not be cut off.
    package struct Failure: Error, Sendable {
        package var error: SystemError
        /// Bytes of the failed write that reached the file.
        package var written: Int
        /// Why the fragment is still there, when it could not be cut off.
        package var cutBack: SystemError?

        package init(error: SystemError, written: Int, cutBack: SystemError? = nil) {
            self.error = error
            self.written = written
            self.cutBack = cutBack
        }
    }

    package let path: String
    private let descriptor: Int32
    private let write: Write
    /// The log's length after the last whole append; appends run one at a time under this lock.
    private let end: Mutex<off_t>

    /// Opens the log at `path` (never through a link; created with `mode` when missing and `create`
    /// says so) and cuts a torn last line off.
    package init(
        path: String, create: Bool = true, mode: mode_t = 0o600, write: @escaping Write = AppendLog.systemWrite
    ) throws(SystemError) {
        self.path = path
        self.write = write
        descriptor = try SystemCall.open(
            path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0), mode: mode)
        let length: off_t
        do throws(SystemError) { length = try Self.cutTornTail(descriptor, path: path) } catch {
            Glibc.close(descriptor)
            throw error
        }
        end = Mutex(length)
    }

    deinit { Glibc.close(descriptor) }

    /// The length of the log's complete lines.
    package var length: off_t { end.withLock { $0 } }

    /// Appends `lines` (whole lines, each ending with a newline) in one write, then, with `sync`,
    /// flushes them to disk; on failure the log is as it was before (the fragment cut off).
    package func append(_ lines: [UInt8], sync: Bool) throws(Failure) {
        let failure = end.withLock { end -> Failure? in
            var written = 0
            do throws(SystemError) {
                let failed: SystemError? = lines.withUnsafeBytes { buffer in
                    do throws(SystemError) {
                        try SystemCall.writeAll(descriptor, buffer, path: path, written: &written, through: write)
                        return nil
                    } catch {
                        return error
                    }
                }
                if let failed { throw failed }
                if sync { try SystemCall.retrying("sync", path: path) { fdatasync(descriptor) } }
                end += off_t(lines.count)
                return nil
            } catch {
                var failure = Failure(
                    error: SystemError(code: error.code, operation: "append to", path: path), written: written)
                if written > 0 {
                    do throws(SystemError) { try SystemCall.truncate(descriptor, to: Int64(end), path: path) } catch {
                        failure.cutBack = error
                    }
                }
                return failure
            }
        }
        if let failure { throw failure }
    }

    /// Calls `body` with each complete line of the file at `path` (without its newline), its 0-based
    /// number and its byte offset, reading in blocks; a last line without a newline (torn) is skipped.
    package static func forEachLine(inFile path: String, _ body: (Int, off_t, [UInt8]) throws -> Void)
        throws(StoreError)
    {
        let descriptor: Int32
        do { descriptor = try SystemCall.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, operation: "read") } catch {
            throw StoreError.output(error)
        }
        defer { Glibc.close(descriptor) }
        var block = [UInt8](repeating: 0, count: 256 * 1024)
        var pending: [UInt8] = []
        var offset: off_t = 0
        var lineStart: off_t = 0
        var number = 0
        while true {
            let read = block.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in
                    try SystemCall.preadAll(descriptor, into: buffer, offset: Int64(offset), path: path)
                }
            }
            let got: Int
            do { got = try read.get() } catch { throw StoreError.output(error) }
            if got == 0 { break }
            var start = 0
            for index in 0..<got where block[index] == UInt8(ascii: "\n") {
                pending += block[start..<index]
                if !pending.isEmpty {
                    do { try body(number, lineStart, pending) } catch { throw StoreError.output("\(error)") }
                    number += 1
                }
                pending.removeAll(keepingCapacity: true)
                start = index + 1
                lineStart = offset + off_t(start)
            }
            pending += block[start..<got]
            offset += off_t(got)
        }
    }

    /// Cuts a last line that has no newline (a write torn by a crash); returns the length after.
    private static func cutTornTail(_ descriptor: Int32, path: String) throws(SystemError) -> off_t {
        var info = stat()
        try SystemCall.retrying("read", path: path) { fstat(descriptor, &info) }
        var end = off_t(info.st_size)
        var byte: UInt8 = 0
        while end > 0 {
            // A byte that cannot be read stops the repair (cutting where the tail is unknown would
            // leave a fragment for the next append to merge with).
            let read = try SystemCall.retrying("read", path: path) { pread(descriptor, &byte, 1, end - 1) }
            guard read == 1 else { throw SystemError(code: EIO, operation: "read", path: path) }
            if byte == UInt8(ascii: "\n") { break }
            end -= 1
        }
        if end < off_t(info.st_size) {
            try SystemCall.truncate(descriptor, to: Int64(end), path: path, operation: "repair")
        }
        return end
    }
}
