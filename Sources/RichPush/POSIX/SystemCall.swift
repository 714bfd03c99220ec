import Foundation

/// System calls as intent: each retried on `EINTR`, each failure a ``SystemError``.
///
/// ```swift
/// let descriptor = try SystemCall.retrying("open", path: path) { open(path, O_RDONLY | O_CLOEXEC) }
/// let bytes = try SystemCall.readAll(descriptor, upTo: 1 << 20, path: path)
/// ```
public enum SystemCall {
    /// Runs `body` until it does not fail with `EINTR`; a result of -1 throws the errno as a ``SystemError``.
    @discardableResult
    public static func retrying<Result: BinaryInteger>(
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
    public static func writeAll(_ descriptor: Int32, _ bytes: [UInt8], path: String? = nil) throws(SystemError) {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(SystemError) in try writeAll(descriptor, buffer, path: path) }
        }.get()
    }

    /// Writes every byte of `buffer` to `descriptor`, retrying short writes and `EINTR`.
    public static func writeAll(
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

    /// Reads until end of file or until `limit` bytes have arrived, whichever comes first.
    ///
    /// Pass one more than the size you accept to tell "exactly at the limit" from "over it".
    public static func readAll(_ descriptor: Int32, upTo limit: Int, path: String? = nil) throws(SystemError)
        -> [UInt8]
    {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: min(max(limit, 1), 64 * 1024))
        while bytes.count < limit {
            let wanted = min(chunk.count, limit - bytes.count)
            let got = try chunk.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in
                    try retrying("read", path: path) { read(descriptor, buffer.baseAddress, wanted) }
                }
            }.get()
            if got == 0 { break }
            bytes += chunk[0..<got]
        }
        return bytes
    }

    /// Reads `count` bytes from `offset` (fewer only at end of file), without moving the file offset.
    public static func preadAll(_ descriptor: Int32, count: Int, offset: Int64, path: String? = nil)
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
    public static func preadAll(
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
    public static func openRegularFile(_ path: String) throws(SystemError) -> Int32 {
        let descriptor = try retrying("open", path: path) {
            open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
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

    /// Whether the process is out of file descriptors (or close to it): open one more and see.
    public static func descriptorsExhausted() -> Bool {
        let probe = open("/dev/null", O_RDONLY | O_CLOEXEC)
        if probe >= 0 {
            close(probe)
            var limit = rlimit()
            return getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 && limit.rlim_cur < 32
        }
        return errno == EMFILE || errno == ENFILE
    }

    /// The soft limit on open file descriptors.
    /// The mode a new file gets, as `open(path, O_CREAT, 0666)` would give it: 0666 less the umask.
    ///
    /// The umask is read from `/proc/self/status` (Linux 4.7 and later), which, unlike `umask(2)`,
    /// does not change it for a moment under other threads; 022 when it cannot be read.
    public static let creationMode: mode_t = {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Umask:") }
        let mask = line.flatMap { mode_t($0.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8) } ?? 0o022
        return 0o666 & ~mask
    }()

    public static var descriptorLimit: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        return Int(clamping: limit.rlim_cur)
    }

    /// Creates the folder `path` and any missing parents (mode 0777 less the umask), as `mkdir -p`
    /// does; a folder already there is fine. A failure names the folder that could not be made and
    /// the system's reason (`/proc/x`: No such file or directory), as ``SystemError`` words it.
    public static func makeFolders(_ path: String, operation: String = "create the folder") throws(SystemError) {
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
