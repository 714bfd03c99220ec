import Glibc

/// System calls as intent: each retried on `EINTR`, each failure a ``SystemError``.
///
/// ```swift
/// let descriptor = try SystemCall.retrying("open", path: path) { open(path, O_RDONLY | O_CLOEXEC) }
/// let bytes = try SystemCall.readAll(descriptor, upTo: 1 << 20, path: path)
/// ```
package enum SystemCall {
    /// Runs `body` until it does not fail with `EINTR`; a result of -1 throws the errno as a ``SystemError``.
    @discardableResult
    package static func retrying<Result: BinaryInteger>(
        _ operation: String, path: String? = nil, _ body: () -> Result
    ) throws(SystemError) -> Result {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = errno
            if code == EINTR { continue }
            DescriptorExhaustion.note(errno: code)
            throw SystemError(code: code, operation: operation, path: path)
        }
    }

    /// Writes every byte to `descriptor`, retrying short writes and `EINTR`.
    package static func writeAll(_ descriptor: Int32, _ bytes: [UInt8], path: String? = nil) throws(SystemError) {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(SystemError) in try writeAll(descriptor, buffer, path: path) }
        }.get()
    }

    /// Writes every byte of `buffer` to `descriptor`, retrying short writes and `EINTR`.
    package static func writeAll(
        _ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, path: String? = nil
    ) throws(SystemError) {
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        while offset < buffer.count {
            let written = try retrying("write", path: path) { write(descriptor, base + offset, buffer.count - offset) }
            // A write of more than 0 bytes that writes none would loop forever; report it as a device error.
            guard written > 0 else { throw SystemError(code: EIO, operation: "write", path: path) }
            offset += written
        }
    }

    /// Writes bytes to a descriptor: the count written, or -1 with `errno` set (the shape of write(2)),
    /// so tests can put a full disk or an interrupted call in its place.
    package typealias Write = (Int32, UnsafeRawBufferPointer) -> Int

    /// Writes every byte of `buffer` through `write`, retrying short writes and `EINTR`; `written`
    /// says how far it got, also when it throws (a caller can cut a partial record off).
    package static func writeAll(
        _ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, path: String? = nil, written: inout Int,
        through write: Write
    ) throws(SystemError) {
        written = 0
        while written < buffer.count {
            let remaining = UnsafeRawBufferPointer(rebasing: buffer[written...])
            let count = try retrying("write", path: path) { write(descriptor, remaining) }
            guard count > 0 else { throw SystemError(code: ENOSPC, operation: "write", path: path) }
            written += count
        }
    }

    /// Reads until end of file or until `limit` bytes have arrived, whichever comes first.
    ///
    /// Pass one more than the size you accept to tell "exactly at the limit" from "over it".
    package static func readAll(_ descriptor: Int32, upTo limit: Int, path: String? = nil) throws(SystemError)
        -> [UInt8]
    {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: min(max(limit, 1), 64 * 1024))
        while bytes.count < limit {
            let wanted = min(chunk.count, limit - bytes.count)
            let got = try chunk.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in
                    try retrying("read", path: path) { Glibc.read(descriptor, buffer.baseAddress, wanted) }
                }
            }.get()
            if got == 0 { break }
            bytes += chunk[0..<got]
        }
        return bytes
    }

    /// Reads `count` bytes from `offset` (fewer only at end of file), without moving the file offset.
    package static func preadAll(_ descriptor: Int32, count: Int, offset: Int64, path: String? = nil)
        throws(SystemError) -> [UInt8]
    {
        var bytes = [UInt8](repeating: 0, count: count)
        let filled = try bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(SystemError) in try preadAll(descriptor, into: buffer, offset: offset, path: path) }
        }.get()
        bytes.removeSubrange(filled...)
        return bytes
    }

    /// Fills `buffer` from `offset` (less only at end of file) and returns how many bytes were read.
    package static func preadAll(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, offset: Int64, path: String? = nil
    ) throws(SystemError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var filled = 0
        while filled < buffer.count {
            let got = try retrying("read", path: path) {
                pread(descriptor, base + filled, buffer.count - filled, off_t(offset) + off_t(filled))
            }
            if got == 0 { break }
            filled += got
        }
        return filled
    }

    /// Opens an existing file for reading without blocking, and refuses anything that is not a
    /// regular file (a FIFO with no writer would block forever; a device may never end).
    package static func openRegularFile(_ path: String) throws(SystemError) -> Int32 {
        let descriptor = try retrying("open", path: path) {
            Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        }
        var info = stat()
        do {
            try retrying("inspect", path: path) { fstat(descriptor, &info) }
        } catch {
            close(descriptor)
            throw error
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw SystemError(
                code: EINVAL, operation: "read", path: path,
                reason: "not a regular file (a FIFO, device or folder)")
        }
        // Regular files never block; clearing the flag keeps later reads ordinary.
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
        return descriptor
    }

    /// The mode a new file gets, as `open(path, O_CREAT, 0666)` would give it: 0666 less the umask.
    ///
    /// The umask is read from `/proc/self/status` (Linux 4.7 and later), which, unlike `umask(2)`,
    /// does not change it for a moment under other threads; 022 when it cannot be read.
    package static let creationMode: mode_t = 0o666 & ~(umaskFromStatus() ?? 0o022)

    /// The `Umask:` line of `/proc/self/status`, or nil.
    static func umaskFromStatus() -> mode_t? {
        guard let descriptor = try? open("/proc/self/status", O_RDONLY | O_CLOEXEC) else { return nil }
        defer { close(descriptor) }
        guard let bytes = try? readAll(descriptor, upTo: 64 * 1024) else { return nil }
        return umask(inStatus: bytes)
    }

    /// The octal value after `Umask:` in the text of a `/proc/<pid>/status` file, or nil.
    static func umask(inStatus bytes: [UInt8]) -> mode_t? {
        for line in bytes.split(separator: UInt8(ascii: "\n")) where line.starts(with: Array("Umask:".utf8)) {
            let digits = line.dropFirst(6).filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
            return mode_t(String(decoding: digits, as: UTF8.self), radix: 8)
        }
        return nil
    }

    /// Opens `path` (`open(2)` with `flags` and, when creating, `mode`), retrying `EINTR`; a failure
    /// is a ``SystemError`` with `operation` and the path.
    package static func open(
        _ path: String, _ flags: Int32, mode: mode_t = 0, operation: String = "open"
    ) throws(SystemError) -> Int32 {
        try retrying(operation, path: path) { Glibc.open(path, flags, mode) }
    }

    /// Opens `path` relative to the folder `folder` (`openat(2)`), retrying `EINTR`.
    package static func open(
        _ path: String, in folder: Int32, _ flags: Int32, mode: mode_t = 0, operation: String = "open",
        displayPath: String? = nil
    ) throws(SystemError) -> Int32 {
        try retrying(operation, path: displayPath ?? path) { openat(folder, path, flags, mode) }
    }

    /// One `read(2)` into `buffer`, retrying `EINTR`: the count read, 0 at end of file.
    package static func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String? = nil
    ) throws(SystemError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try retrying("read", path: path) { Glibc.read(descriptor, base, buffer.count) }
    }

    /// Cuts the file to `length` bytes (`ftruncate(2)`), retrying `EINTR`.
    package static func truncate(
        _ descriptor: Int32, to length: Int64, path: String? = nil, operation: String = "truncate"
    ) throws(SystemError) {
        try retrying(operation, path: path) { ftruncate(descriptor, off_t(length)) }
    }

    /// Takes the exclusive advisory lock on the file (`flock(2)`, `LOCK_EX | LOCK_NB`), retrying
    /// `EINTR`: false when another process holds it.
    package static func lockExclusively(_ descriptor: Int32, path: String? = nil) throws(SystemError) -> Bool {
        do {
            try retrying("lock", path: path) { flock(descriptor, LOCK_EX | LOCK_NB) }
            return true
        } catch  where error.code == EWOULDBLOCK {
            return false
        }
    }

    /// Waits for `descriptor` to become readable (`poll(2)`, `POLLIN`) for at most `milliseconds`
    /// (-1: without end), retrying `EINTR`; the `revents` seen, 0 on timeout.
    package static func waitReadable(_ descriptor: Int32, milliseconds: Int32, path: String? = nil) throws(SystemError)
        -> Int16
    {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = try retrying("wait for", path: path) { poll(&entry, 1, milliseconds) }
        return ready == 0 ? 0 : entry.revents
    }

    /// Creates the folder `path` and any missing parents (mode 0777 less the umask), as `mkdir -p`
    /// does; a folder already there is fine. A failure names the folder that could not be made and
    /// the system's reason (`/proc/x`: No such file or directory), as ``SystemError`` words it.
    package static func makeFolders(_ path: String, operation: String = "create the folder") throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            if mkdir(prefix, 0o777) == 0 { continue }
            let code = errno
            var info = stat()
            if code == EEXIST, stat(prefix, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { continue }
            throw SystemError(code: code, operation: operation, path: prefix)
        }
    }
}
