import Foundation

/// An append-only file of NDJSON records: the batch's resume state.
///
/// Each record is appended with one write(2) on a descriptor opened with O_APPEND, so concurrent
/// appends from many threads never interleave. A crash can leave at most a torn last line, which
/// opening the journal cuts off.
final class Journal: Sendable {
    let path: String
    private let descriptor: Int32

    init(path: String) throws(StoreError) {
        self.path = path
        let folder = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let descriptor = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw StoreError("cannot open '\(path)': \(String(cString: strerror(errno)))")
        }
        self.descriptor = descriptor
        try cutTornTail()
    }

    deinit { close(descriptor) }

    /// Appends one record (which must end with a newline).
    func append(_ line: [UInt8]) throws(StoreError) {
        guard BatchRunner.write(line, to: descriptor) else {
            throw StoreError("cannot append to '\(path)': \(String(cString: strerror(errno)))")
        }
    }

    /// Calls `body` with each complete line (without its newline) and its 0-based number, reading in blocks.
    func forEachLine(_ body: (Int, [UInt8]) throws -> Void) throws(StoreError) {
        var block = [UInt8](repeating: 0, count: 256 * 1024)
        var pending: [UInt8] = []
        var offset: off_t = 0
        var number = 0
        while true {
            let got = block.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, offset) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw StoreError("cannot read '\(path)': \(String(cString: strerror(errno)))") }
            if got == 0 { break }
            offset += off_t(got)
            var start = 0
            for index in 0..<got where block[index] == UInt8(ascii: "\n") {
                pending += block[start..<index]
                if !pending.isEmpty {
                    do { try body(number, pending) } catch { throw StoreError("\(error)") }
                    number += 1
                }
                pending.removeAll(keepingCapacity: true)
                start = index + 1
            }
            pending += block[start..<got]
        }
    }

    /// The `input_sha256` of each input's last record; inputs whose last record has none are left out.
    func lastDigests() throws(StoreError) -> [String: String] {
        var digests: [String: String] = [:]
        try forEachLine { _, line in
            if let input = Self.input(of: line) { digests[input] = Self.inputSha256(of: line) }
        }
        return digests
    }

    /// Replaces the journal with the (complete) file `replacement`, by renaming it over the journal.
    ///
    /// This object's descriptor keeps pointing at the old file: call this last.
    func replace(with replacement: TemporaryFile, durable: Bool) throws(StoreError) {
        guard !durable || fsync(replacement.descriptor) == 0, rename(replacement.path, path) == 0 else {
            throw StoreError("cannot compact '\(path)': \(String(cString: strerror(errno)))")
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

    /// Cuts a last line that has no newline (a write torn by a crash).
    private func cutTornTail() throws(StoreError) {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_size > 0 else { return }
        var end = off_t(info.st_size)
        var byte: UInt8 = 0
        while end > 0 {
            guard pread(descriptor, &byte, 1, end - 1) == 1 else { break }
            if byte == UInt8(ascii: "\n") { break }
            end -= 1
        }
        if end < off_t(info.st_size) && ftruncate(descriptor, end) != 0 {
            throw StoreError("cannot repair '\(path)': \(String(cString: strerror(errno)))")
        }
    }
}
