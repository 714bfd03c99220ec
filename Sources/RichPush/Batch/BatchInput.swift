import Foundation

/// One payload of a batch: where its bytes are and the relative name its output takes.
public struct BatchItem: Sendable, Equatable {
    public enum Source: Sendable, Equatable {
        /// A whole file.
        case file(path: String)
        /// One line of an NDJSON file: its byte range.
        case line(path: String, offset: Int64, length: Int)
    }

    /// The name reports use: the relative path, or `file.ndjson:LINE`.
    public var name: String
    /// The relative path of its output (and record) inside the output folder.
    public var outputName: String
    public var source: Source

    public init(name: String, outputName: String, source: Source) {
        self.name = name
        self.outputName = outputName
        self.source = source
    }

    /// Reads the payload's bytes, at most `limit` + 1 (anything longer is over APNs' limit anyway).
    public func read(limit: Int) -> Result<[UInt8], BatchInputError> {
        switch source {
        case .file(let path):
            // A FIFO (or device) named *.json would block the run forever: only regular files are read.
            let descriptor: Int32
            do { descriptor = try SystemCall.openRegularFile(path) } catch {
                return .failure(BatchInputError("cannot read '\(path)': \(error.cause)"))
            }
            defer { close(descriptor) }
            var info = stat()
            let size = fstat(descriptor, &info) == 0 ? max(0, Int(info.st_size)) : limit + 1
            return Self.read(descriptor, from: 0, count: min(size, limit + 1), path: path)
        case .line(let path, let offset, let length):
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return .failure(BatchInputError("cannot read '\(path)': \(Self.reason())")) }
            defer { close(descriptor) }
            return Self.read(descriptor, from: offset, count: min(length, limit + 1), path: path)
        }
    }

    private static func read(_ descriptor: Int32, from offset: Int64, count: Int, path: String) -> Result<
        [UInt8], BatchInputError
    > {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                buffer.baseAddress.map { pread(descriptor, $0 + filled, count - filled, off_t(offset) + off_t(filled)) }
                    ?? 0
            }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { return .failure(BatchInputError("cannot read '\(path)': \(reason())")) }
            if got == 0 { break }
            filled += got
        }
        bytes.removeSubrange(filled...)
        return .success(bytes)
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
}

/// The input of a batch could not be used as a whole (not found, no payloads).
public struct BatchInputError: Error, Sendable, CustomStringConvertible {
    public var message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Finds a batch's payloads: `*.json` files in a folder (optionally below it), or the lines of an NDJSON file.
public enum BatchInput {
    /// The items under `path`, sorted by name, so runs and resumes see the same order.
    public static func items(at path: String, recursive: Bool) throws(BatchInputError) -> [BatchItem] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw BatchInputError("'\(path)' does not exist: give a folder of *.json payloads or an NDJSON file")
        }
        if !isDirectory.boolValue { return try lines(of: path) }
        var names: [String] = []
        if recursive {
            let enumerator = FileManager.default.enumerator(atPath: path)
            while let name = enumerator?.nextObject() as? String {
                if name.hasSuffix(".json") && !isFolder(path + "/" + name) { names.append(name) }
            }
        } else {
            let entries: [String]
            do { entries = try FileManager.default.contentsOfDirectory(atPath: path) } catch {
                throw BatchInputError("cannot list '\(path)': \(error.localizedDescription)")
            }
            names = entries.filter { $0.hasSuffix(".json") && !isFolder(path + "/" + $0) }
        }
        return names.sorted().map { BatchItem(name: $0, outputName: $0, source: .file(path: path + "/" + $0)) }
    }

    private static func isFolder(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// One item per non-blank line; the file is scanned in blocks, never held whole.
    private static func lines(of path: String) throws(BatchInputError) -> [BatchItem] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw BatchInputError("cannot read '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let base = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let file = URL(fileURLWithPath: path).lastPathComponent
        var items: [BatchItem] = []
        var block = [UInt8](repeating: 0, count: 256 * 1024)
        var offset: Int64 = 0
        var lineStart: Int64 = 0
        var lineNumber = 1
        var blank = true
        func finishLine(end: Int64) {
            if !blank {
                let padded = String(lineNumber)
                let number = String(repeating: "0", count: max(0, 6 - padded.count)) + padded
                items.append(
                    BatchItem(
                        name: "\(file):\(lineNumber)", outputName: "\(base)/\(number).json",
                        source: .line(path: path, offset: lineStart, length: Int(end - lineStart))))
            }
            lineNumber += 1
            lineStart = end + 1
            blank = true
        }
        while true {
            let got = block.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw BatchInputError("cannot read '\(path)': \(String(cString: strerror(errno)))") }
            if got == 0 { break }
            for index in 0..<got {
                let byte = block[index]
                if byte == UInt8(ascii: "\n") {
                    finishLine(end: offset + Int64(index))
                } else if ![0x20, 0x09, 0x0d].contains(byte) {
                    blank = false
                }
            }
            offset += Int64(got)
        }
        finishLine(end: offset)
        return items
    }
}
