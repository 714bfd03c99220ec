import Digest
import Foundation
import POSIXKit
import RichPush

/// The end of a batch run: `results.ndjson`, the compacted journal and `summary.json`, and reading
/// the records back.
extension BatchRunner {
    /// Writes `results.ndjson` (the journal's last record of each current input, in input order:
    /// the journal holds them in completion order, which differs between identical runs), compacts
    /// the journal to the same lines, and builds the summary.
    func finish(
        journal: Journal, processed: Int, skipped: Int, interrupted: Bool, started: ContinuousClock.Instant
    ) throws(StoreError) -> BatchSummary {
        let current = Set(items.map(\.name))
        // Pass 1: where the last line of each current input is (names and offsets only in memory).
        var last: [String: (number: Int, offset: off_t, length: Int)] = [:]
        try Journal.forEachLine(inFile: journal.path) { number, offset, line in
            if let input = Journal.input(of: line), current.contains(input) {
                last[input] = (number, offset, line.count)
            }
        }
        // Pass 2: those lines in input order, read back one at a time, copied and counted.
        var verdicts: [String: Int] = [:]
        var expandedViews: [String: Int] = [:]
        var networks: [String: (payloads: Int, requested: Int, attached: Int, times: [Double])] = [:]
        var phones: [String: (payloads: Int, requested: Int, attached: Int, times: [Double])] = [:]
        var reasons: [String: Int] = [:]
        var otherSDK = 0
        var times: [Double] = []
        var histogram = LatencyHistogram()
        // Two copies are written as the lines stream past: results.ndjson, and the compacted journal.
        // (Not pooled temporaries: they are committed, unnamed where the file system allows it.)
        let results = try output.makeTemporary(inFolder: output.folder)
        defer { results.discard() }
        let compacted = try output.makeTemporary(inFolder: (journal.path as NSString).deletingLastPathComponent)
        defer { compacted.discard() }
        var failure: SystemError?
        // Lines go out in blocks of about 64 KiB, not a write per line to each copy.
        var block: [UInt8] = []
        block.reserveCapacity(Self.blockBytes + 4096)
        func writeBlock() {
            if failure == nil, !block.isEmpty {
                failure = Self.write(block, to: results.descriptor) ?? Self.write(block, to: compacted.descriptor)
            }
            block.removeAll(keepingCapacity: true)
        }
        let reader: Int32
        do { reader = try SystemCall.open(journal.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, operation: "read") } catch {
            throw StoreError.output(error)
        }
        defer { close(reader) }
        for item in items {
            guard let place = last[item.name] else { continue }
            let line = try Journal.bytes(of: reader, at: place.offset, length: place.length, path: journal.path)
            guard let record = try? JSONValue.parse(line) else { continue }
            if case .string(let verdict) = record["verdict"] { verdicts[verdict, default: 0] += 1 }
            if case .string(let reason) = record["reason"] { reasons[reason, default: 0] += 1 }
            // No media read, but another SDK's keys: the sender asked for media the phone will not show.
            let foreign =
                record["verdict"] == .string(Verdict.noAttachment.rawValue)
                && Self.carriesOtherSDKWarning(record)
            if foreign { otherSDK += 1 }
            if case .string(let view)? = record["content_extension"]?["outcome"] {
                expandedViews[view, default: 0] += 1
            }
            func count(
                into rows: inout [String: (payloads: Int, requested: Int, attached: Int, times: [Double])],
                _ key: String
            ) {
                var row = rows[key] ?? (0, 0, 0, [])
                row.payloads += 1
                if record["verdict"] != .string(Verdict.noAttachment.rawValue) || foreign { row.requested += 1 }
                if record["verdict"] == .string(Verdict.attached.rawValue) { row.attached += 1 }
                if case .number(let total)? = record["download"]?["timings_ms"]?["total"], let value = Double(total) {
                    row.times.append(value)
                }
                rows[key] = row
            }
            if case .string(let network)? = record["network"] { count(into: &networks, network) }
            if case .string(let phone)? = record["phone"] { count(into: &phones, phone) }
            if case .number(let total) = record["download"]?["timings_ms"]?["total"]
                ?? record["timings_milliseconds"]?["total"],
                let value = Double(total)
            {
                times.append(value)
                // Clamped: a damaged journal's number must not trap (a year is far past any budget).
                histogram.record(microseconds: UInt64(min(max(0, (value * 1000).rounded()), 3.2e13)))
            }
            block += line
            block.append(UInt8(ascii: "\n"))
            if block.count >= Self.blockBytes { writeBlock() }
        }
        writeBlock()
        let resultsPath = output.folder + "/results.ndjson"
        if let failure {
            throw StoreError.output(SystemError(code: failure.code, operation: "write", path: resultsPath))
        }
        // The mode any tool's output gets (0666 less the umask), as summary.json: an artifact uploader reads it.
        do { try results.commit(as: resultsPath, durable: output.durable, replacingLinks: true) } catch {
            throw StoreError.output(error)
        }
        try journal.replace(with: compacted, durable: output.durable)
        let recorded = last.count
        let noAttachment = verdicts[Verdict.noAttachment.rawValue] ?? 0
        let attached = verdicts[Verdict.attached.rawValue] ?? 0
        let requested = recorded - noAttachment + otherSDK
        var summary = BatchSummary(
            total: items.count, recorded: recorded, processed: processed, skipped: skipped, interrupted: interrupted,
            verdicts: verdicts, reasons: reasons, requested: requested, attached: attached,
            displayRate: Rounding.share(requested == 0 ? 1 : Double(attached) / Double(requested)),
            downloadMilliseconds: BatchSummary.percentiles(times),
            // Milliseconds are what a wall time means here: 0.569, not 0.5690729999999999.
            elapsedSeconds: ((ContinuousClock.now - started).inSeconds * 1000).rounded() / 1000,
            contentExtensions: expandedViews.isEmpty ? nil : expandedViews,
            downloadHistogram: histogram,
            networks: Self.summaryRows(networks),
            audience: Self.summaryRows(phones),
            shards: [shard?.index ?? 1],
            shardCount: shard?.count ?? 1)
        summary.otherSDKPayloads = otherSDK == 0 ? nil : otherSDK
        summary.identity = identity
        summary.decide(thresholds)
        do {
            _ = try output.writeAtomically(Array((try BatchJSON.pretty(summary) + "\n").utf8), to: "summary.json")
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.output("cannot encode summary.json: \(error)")
        }
        return summary
    }

    /// Calls `body` with each record of `results.ndjson`, one at a time (after ``run(progress:)``).
    package func forEachRecord(_ body: (BatchRecord) -> Void) throws(StoreError) {
        try Journal.forEachLine(inFile: output.folder + "/results.ndjson") { _, line in
            if let record = try? BatchJSON.recordDecoder.decode(BatchRecord.self, from: Data(line)) { body(record) }
        }
    }

    /// SHA-256 of a payload's bytes as lower-case hex.
    static func sha256(_ bytes: [UInt8]) -> String? {
        SHA256Digest.hex(of: bytes)
    }

    /// Writes all of `bytes` to `descriptor` (the POSIX layer retries interrupted and short writes); the
    /// failure, or nil.
    /// How many bytes of results are written at once.
    static let blockBytes = 64 * 1024

    static func write(_ bytes: [UInt8], to descriptor: Int32) -> SystemError? {
        do { try SystemCall.writeAll(descriptor, bytes) } catch { return error }
        return nil
    }

    /// Whether a record's warnings include `other-sdk-payload`.
    static func carriesOtherSDKWarning(_ record: JSONValue) -> Bool {
        guard case .array(let warnings)? = record["warnings"] else { return false }
        return warnings.contains { $0["code"] == .string("other-sdk-payload") }
    }

    /// Counted rows (networks or phones) as the summary keeps them; nil when the run had none.
    private static func summaryRows(_ rows: [String: (payloads: Int, requested: Int, attached: Int, times: [Double])])
        -> [String: BatchSummary.NetworkRow]?
    {
        rows.isEmpty
            ? nil
            : rows.mapValues { row in
                BatchSummary.NetworkRow(
                    payloads: row.payloads, requested: row.requested, attached: row.attached,
                    downloadMilliseconds: BatchSummary.percentiles(row.times))
            }
    }
}
