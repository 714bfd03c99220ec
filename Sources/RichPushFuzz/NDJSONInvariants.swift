import Foundation
import RichPush
import RichPushRuns

/// The NDJSON batch input: `BatchInput` splits a file into one item per non-blank line.
///
/// The items match a plain split at newlines (names, order, byte ranges), reading an item gives
/// exactly its line, and every line then goes through the payload invariants, as a batch would.
enum NDJSONInvariants {
    /// The file the input is written to, in the run's scratch folder.
    static let path = Scratch.folder + "/input.ndjson"

    static func check(_ bytes: [UInt8]) {
        guard Scratch.write(bytes, to: path) else { return }
        let items: [BatchItem]
        do { items = try BatchInput.items(at: path, recursive: false) } catch {
            require(false, "a readable NDJSON file was refused: \(error)")
            return
        }
        var expected: [(number: Int, offset: Int, line: ArraySlice<UInt8>)] = []
        var offset = 0
        for (index, line) in splitLines(bytes).enumerated() {
            if line.contains(where: { ![0x20, 0x09, 0x0d].contains($0) }) {
                expected.append((index + 1, offset, line))
            }
            offset += line.count + 1
        }
        require(items.count == expected.count, "\(items.count) items for \(expected.count) non-blank lines")
        for (item, line) in zip(items, expected) {
            require(item.name == "input.ndjson:\(line.number)", "item '\(item.name)' is line \(line.number)")
            require(
                item.source == .line(path: path, offset: Int64(line.offset), length: line.line.count),
                "item '\(item.name)' has the byte range \(item.source), not \(line.offset)+\(line.line.count)")
            guard case .success(let read) = item.read(limit: 1 << 20) else {
                require(false, "item '\(item.name)' could not be read")
                return
            }
            require(read.elementsEqual(line.line), "item '\(item.name)' read other bytes than its line")
            PayloadInvariants.check(read)
        }
    }
}

/// The fuzz run's scratch folder: `RICHPUSH_FUZZ_SCRATCH`, or a new folder under the temporary folder.
enum Scratch {
    static let folder: String = {
        if let folder = ProcessInfo.processInfo.environment["RICHPUSH_FUZZ_SCRATCH"], !folder.isEmpty {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            return folder
        }
        var template = Array((NSTemporaryDirectory() + "/richpush-fuzz-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        return made.map { String(cString: $0) } ?? NSTemporaryDirectory()
    }()

    /// Replaces the file at `path` with `bytes`; false (and a message) when the file system refuses.
    static func write(_ bytes: [UInt8], to path: String) -> Bool {
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return true
        } catch {
            report("richpush-fuzz: cannot write '\(path)': \(error)\n")
            return false
        }
    }
}
