import Foundation
import RichPush
import RichPushRuns

/// Batch records, as `results.ndjson` and the journal hold them.
///
/// - Each line the record decoder accepts re-encodes (``BatchRecord/jsonLine``) to one line of JSON
///   that it accepts again as the same record, and that encodes to the same line.
/// - ``BatchRunner/forEachRecord(_:)`` reads a file of such lines as exactly the complete lines
///   the decoder accepts, in order (a last line without its newline is a torn write: dropped).
enum RecordInvariants {
    /// A runner over the scratch output folder, used only to read its `results.ndjson`.
    ///
    /// Nothing is processed, so the engine never downloads; it exists because the runner needs one.
    static let runner: BatchRunner? = {
        do {
            let output = try AttachmentStore(folder: Scratch.folder + "/records")
            let engine = try FetchEngine(loops: 1)
            return BatchRunner(
                items: [], service: ServiceExtension(engine: engine, store: output), output: output, concurrency: 1,
                force: false)
        } catch {
            report("richpush-fuzz: cannot set up the record reader: \(error)\n")
            return nil
        }
    }()

    static func check(_ bytes: [UInt8]) {
        var accepted: [BatchRecord] = []
        let lines = splitLines(bytes)
        for (index, line) in lines.enumerated() {
            guard let record = decode(line) else { continue }
            checkRoundTrip(record)
            // The last piece has no newline: a torn write the reader drops.
            if index < lines.count - 1 { accepted.append(record) }
        }
        guard let runner, Scratch.write(bytes, to: runner.output.folder + "/results.ndjson") else { return }
        var read: [BatchRecord] = []
        do { try runner.forEachRecord { read.append($0) } } catch {
            require(false, "results.ndjson could not be read: \(error)")
        }
        require(
            read == accepted,
            "the reader returned \(read.count) records; the lines hold \(accepted.count) the decoder accepts")
    }

    static func decode(_ line: ArraySlice<UInt8>) -> BatchRecord? {
        try? BatchJSON.recordDecoder.decode(BatchRecord.self, from: Data(line))
    }

    static func checkRoundTrip(_ record: BatchRecord) {
        let line = record.jsonLine
        let bytes = Array(line.utf8)
        require(bytes.last == UInt8(ascii: "\n"), "a record's line does not end with a newline")
        require(
            bytes.dropLast().firstIndex(of: UInt8(ascii: "\n")) == nil, "a record's line holds a newline: \(line)")
        require((try? JSONValue.parse(Array(bytes.dropLast()))) != nil, "a record's line is not JSON: \(line)")
        guard let again = decode(bytes.dropLast()) else {
            require(false, "a record's line is not accepted again: \(line)")
            return
        }
        require(again == record, "decode -> encode -> decode changed the record: \(line)")
        require(again.jsonLine == line, "encoding the record twice gave two lines: \(line)")
    }
}
