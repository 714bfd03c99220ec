import Foundation
import POSIXKit
import RichPush

/// One payload of a batch: where its bytes are and the relative name its output takes.
package struct BatchItem: Sendable, Equatable {
    package enum Source: Sendable, Equatable {
        /// A whole file, by the bytes of its path (file names need not be UTF-8), which must resolve
        /// inside `folder` (the input folder's real path, also as bytes).
        case file(path: [UInt8], folder: [UInt8])
        /// One line of an NDJSON file: its byte range.
        case line(path: String, offset: Int64, length: Int)
    }

    /// The name reports use: the relative path (bytes that are not UTF-8, and control characters,
    /// written as `\xNN`), or `file.ndjson:LINE`.
    package var name: String
    /// The relative path of its output (and record) inside the output folder.
    package var outputName: String
    package var source: Source

    package init(name: String, outputName: String, source: Source) {
        self.name = name
        self.outputName = outputName
        self.source = source
    }

    /// Reads the payload's bytes, at most `limit` + 1 (anything longer is over APNs' limit anyway).
    ///
    /// A file is read only when it is a regular file whose real path is inside the input folder: a
    /// `*.json` link that leads out of the folder, a FIFO or a device is refused, never opened for
    /// reading in a way that could block.
    package func read(limit: Int) -> Result<[UInt8], BatchInputError> {
        switch source {
        case .file(let path, let folder):
            guard let resolved = BatchInput.realPath(path) else {
                let failure = SystemError.current("read", path: name)
                DescriptorExhaustion.note(failure)
                return .failure(BatchInputError.input(failure))
            }
            guard resolved.starts(with: folder + [UInt8(ascii: "/")]) else {
                return .failure(
                    BatchInputError.input(
                        "'\(name)' is a link to '\(BatchInput.displayName(resolved))', outside the input folder; "
                            + "richpush does not follow links out of it. Copy the payload into the folder"))
            }
            let descriptor: Int32
            do {
                descriptor = try SystemCall.retrying("read", path: name) {
                    open(BatchInput.cString(resolved), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
                }
            } catch {
                return .failure(BatchInputError.input(error))
            }
            defer { close(descriptor) }
            var info = stat()
            do { try SystemCall.retrying("read", path: name) { fstat(descriptor, &info) } } catch {
                return .failure(BatchInputError.input(error))
            }
            guard info.st_mode & S_IFMT == S_IFREG else {
                return .failure(BatchInputError.input("'\(name)' is not a regular file (a FIFO, device or folder)"))
            }
            let size = max(0, Int(info.st_size))
            return Self.read(descriptor, from: 0, count: min(size, limit + 1), path: name)
        case .line(let path, let offset, let length):
            let descriptor: Int32
            do { descriptor = try SystemCall.open(path, O_RDONLY | O_CLOEXEC, operation: "read") } catch {
                return .failure(BatchInputError.input(error))
            }
            defer { close(descriptor) }
            return Self.read(descriptor, from: offset, count: min(length, limit + 1), path: path)
        }
    }

    private static func read(_ descriptor: Int32, from offset: Int64, count: Int, path: String) -> Result<
        [UInt8], BatchInputError
    > {
        do {
            return .success(try SystemCall.preadAll(descriptor, count: count, offset: offset, path: path))
        } catch {
            return .failure(BatchInputError.input(error))
        }
    }
}

/// The input of a batch could not be used as a whole (not found, no payloads): the one I/O error, of
/// kind `input`.
package typealias BatchInputError = IOFailure

/// Finds a batch's payloads: `*.json` files in a folder (optionally below it), or the lines of an NDJSON file.
package enum BatchInput {
    /// The items under `path`, sorted by name, so runs and resumes see the same order.
    ///
    /// In a folder, every entry named `*.json` that is not a folder is an item, whatever its name's
    /// bytes; `recursive` descends into subfolders but never through a link. Whether an item may
    /// be read (a regular file inside the folder) is decided when it is read, so a refused one still
    /// gets its record.
    package static func items(at path: String, recursive: Bool) throws(BatchInputError) -> [BatchItem] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw BatchInputError.input("'\(path)' does not exist: give a folder of *.json payloads or an NDJSON file")
        }
        if !isDirectory.boolValue { return try lines(of: path) }
        guard let folder = realPath(Array(path.utf8)) else {
            throw BatchInputError.input(SystemError.current("read", path: path))
        }
        var names: [[UInt8]] = []
        try walk(folder, relative: [], recursive: recursive, into: &names)
        return names.map { relative in
            let name = displayName(relative)
            return BatchItem(
                name: name, outputName: name,
                source: .file(path: folder + [UInt8(ascii: "/")] + relative, folder: folder))
        }.sorted { $0.name < $1.name }
    }

    /// Collects the relative names (as bytes) of the `*.json` entries below `root + relative`.
    private static func walk(_ root: [UInt8], relative: [UInt8], recursive: Bool, into names: inout [[UInt8]])
        throws(BatchInputError)
    {
        let directory = relative.isEmpty ? root : root + [UInt8(ascii: "/")] + relative
        guard let stream = opendir(cString(directory)) else {
            throw BatchInputError.input(SystemError.current("list", path: displayName(directory)))
        }
        defer { closedir(stream) }
        let suffix = Array(".json".utf8)
        while let entry = readdir(stream) {
            let name = SystemCall.entryName(entry)
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            let child = relative.isEmpty ? name : relative + [UInt8(ascii: "/")] + name
            let full = root + [UInt8(ascii: "/")] + child
            var info = stat()
            guard lstat(cString(full), &info) == 0 else { continue }
            let type = info.st_mode & S_IFMT
            if type == S_IFDIR {
                if recursive { try walk(root, relative: child, recursive: true, into: &names) }
                continue
            }
            guard name.count > suffix.count, name.suffix(suffix.count).elementsEqual(suffix) else { continue }
            // A link to a folder is not a payload (and is not descended into).
            if type == S_IFLNK, stat(cString(full), &info) == 0, info.st_mode & S_IFMT == S_IFDIR { continue }
            names.append(child)
        }
    }

    /// The canonical path of `path` (links resolved), as bytes; nil with `errno` set when it cannot be resolved.
    static func realPath(_ path: [UInt8]) -> [UInt8]? {
        guard let resolved = realpath(cString(path), nil) else { return nil }
        defer { free(resolved) }
        return Array(UnsafeRawBufferPointer(start: resolved, count: strlen(resolved)))
    }

    /// A path's bytes as a NUL-terminated C string.
    static func cString(_ bytes: [UInt8]) -> [CChar] {
        bytes.map { CChar(bitPattern: $0) } + [0]
    }

    /// A file name for people: UTF-8 as it is, every other byte (and every control character) as `\xNN`.
    static func displayName(_ bytes: [UInt8]) -> String {
        var text = ""
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            let length =
                switch lead {
                case 0x20..<0x7f: 1
                case 0xc2...0xdf: 2
                case 0xe0...0xef: 3
                case 0xf0...0xf4: 4
                default: 0
                }
            if length > 0, index + length <= bytes.count,
                let scalar = String(validating: bytes[index..<(index + length)], as: UTF8.self),
                scalar.unicodeScalars.allSatisfy({ $0.properties.generalCategory != .control })
            {
                text += scalar
                index += length
            } else {
                text += "\\x" + (lead < 16 ? "0" : "") + String(lead, radix: 16, uppercase: true)
                index += 1
            }
        }
        return text
    }

    /// One item per non-blank line; the file is scanned in blocks, never held whole.
    private static func lines(of path: String) throws(BatchInputError) -> [BatchItem] {
        let descriptor: Int32
        do { descriptor = try SystemCall.open(path, O_RDONLY | O_CLOEXEC, operation: "read") } catch {
            throw BatchInputError.input(error)
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
            let read = block.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in try SystemCall.read(descriptor, into: buffer, path: path) }
            }
            let got: Int
            do { got = try read.get() } catch { throw BatchInputError.input(error) }
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
