import Foundation

/// Runs many payloads through one ``ServiceExtension``, concurrently, resumably, with nothing lost.
///
/// Layout of the output folder:
///
/// ```
/// OUTDIR/payloads/<input name>     the mutated payload (or {"richpush":{...}} for input that is no JSON object)
/// OUTDIR/attachments/              the stored attachments
/// OUTDIR/results.ndjson            one record per payload, in input order
/// OUTDIR/summary.json              counts, display rate, download-time percentiles
/// OUTDIR/.richpush/records/        one record file per payload: the resume state
/// ```
///
/// Every file is written atomically (temporary, flush, rename). A payload is complete when both its
/// output and its record exist; the record is written last. A rerun skips complete payloads and
/// `results.ndjson` is rebuilt from the records of the current inputs, so after any sequence of
/// interruptions and resumes every input has exactly one record and one output. Cancelling the
/// task running ``run(progress:)`` stops launching payloads and cancels downloads in flight; those
/// payloads get no record and are redone on the next run.
public struct BatchRunner: Sendable {
    public let items: [BatchItem]
    public let service: ServiceExtension
    /// The output folder (as a store: atomic writes inside it only).
    public let output: AttachmentStore
    /// Payloads in flight at once.
    public let concurrency: Int
    /// Redo payloads an earlier run completed.
    public let force: Bool

    public init(items: [BatchItem], service: ServiceExtension, output: AttachmentStore, concurrency: Int, force: Bool) {
        self.items = items
        self.service = service
        self.output = output
        self.concurrency = max(1, concurrency)
        self.force = force
    }

    /// The largest payload read; anything longer is over APNs' limit, and only its size matters.
    static let readLimit = 1 << 20

    /// Progress as payloads finish.
    public struct Progress: Sendable {
        public var total: Int
        public var skipped: Int
        public var done: Int
        public var verdicts: [Verdict: Int]
        public var started: ContinuousClock.Instant
    }

    /// Processes every incomplete payload, then writes `results.ndjson` and `summary.json`.
    public func run(progress: @escaping @Sendable (Progress) -> Void = { _ in }) async throws(StoreError)
        -> BatchSummary
    {
        let started = ContinuousClock.now
        let pending = force ? items : items.filter { !isComplete($0) }
        var state = Progress(
            total: items.count, skipped: items.count - pending.count, done: 0, verdicts: [:], started: started)
        progress(state)
        var storeFailure: StoreError?
        await withTaskGroup(of: Result<Verdict?, StoreError>.self) { group in
            var next = 0
            func launch() {
                let item = pending[next]
                next += 1
                group.addTask { await process(item) }
            }
            while next < pending.count && next < concurrency { launch() }
            for await finished in group {
                switch finished {
                case .success(let verdict?):
                    state.done += 1
                    state.verdicts[verdict, default: 0] += 1
                    progress(state)
                case .success(nil):
                    break
                case .failure(let error):
                    storeFailure = storeFailure ?? error
                    group.cancelAll()
                }
                if next < pending.count && !Task.isCancelled && storeFailure == nil { launch() }
            }
        }
        if let storeFailure { throw storeFailure }
        return try finish(
            processed: state.done, skipped: state.skipped, interrupted: Task.isCancelled, started: started)
    }

    /// One payload: process, write the output, then the record. Nil when cancelled before finishing.
    private func process(_ item: BatchItem) async -> Result<Verdict?, StoreError> {
        let result: ProcessResult
        switch await Offload.run({ item.read(limit: Self.readLimit) }) {
        case .success(let bytes): result = await service.process(bytes)
        case .failure(let error): result = .unreadable(error.message + ". Check the file.")
        }
        if Task.isCancelled || result.outcome.reason == .cancelled { return .success(nil) }
        let outputName = "payloads/" + item.outputName
        let body =
            result.mutatedPayload ?? Array(JSONValue.object([("richpush", result.outcome.payloadSummary)]).text.utf8)
        let record = BatchRecord(item: item, output: outputName, outcome: result.outcome)
        let recordPath = recordName(item)
        let output = self.output
        return await Offload.run {
            do {
                _ = try output.writeAtomically(body, to: outputName)
                _ = try output.writeAtomically(Array((try BatchJSON.line(record)).utf8), to: recordPath)
            } catch let error as StoreError {
                return .failure(error)
            } catch {
                return .failure(StoreError("cannot encode the record of \(item.name): \(error)"))
            }
            return .success(result.outcome.verdict)
        }
    }

    private func recordName(_ item: BatchItem) -> String { ".richpush/records/" + item.outputName }

    private func isComplete(_ item: BatchItem) -> Bool {
        FileManager.default.fileExists(atPath: output.folder + "/" + recordName(item))
            && FileManager.default.fileExists(atPath: output.folder + "/payloads/" + item.outputName)
    }

    /// Streams the records of the current inputs into `results.ndjson` and builds the summary.
    private func finish(processed: Int, skipped: Int, interrupted: Bool, started: ContinuousClock.Instant)
        throws(StoreError) -> BatchSummary
    {
        var verdicts: [String: Int] = [:]
        var reasons: [String: Int] = [:]
        var times: [Double] = []
        var recorded = 0
        let temporary = try output.makeTemporary()
        defer { temporary.discard() }
        for item in items {
            guard let data = FileManager.default.contents(atPath: output.folder + "/" + recordName(item)),
                let record = try? BatchJSON.decoder.decode(BatchRecord.self, from: data)
            else { continue }
            recorded += 1
            verdicts[record.verdict.rawValue, default: 0] += 1
            reasons[record.reason.rawValue, default: 0] += 1
            if let total = record.timingsMilliseconds?.total { times.append(total) }
            var line = Array(data)
            if line.last != UInt8(ascii: "\n") { line.append(UInt8(ascii: "\n")) }
            guard Self.write(line, to: temporary.descriptor) else {
                throw StoreError("cannot write results.ndjson: \(String(cString: strerror(errno)))")
            }
        }
        guard !output.durable || fsync(temporary.descriptor) == 0,
            rename(temporary.path, output.folder + "/results.ndjson") == 0
        else {
            throw StoreError("cannot write results.ndjson: \(String(cString: strerror(errno)))")
        }
        times.sort()
        func percentile(_ p: Double) -> Double {
            times.isEmpty ? 0 : times[min(times.count - 1, max(0, Int((p * Double(times.count)).rounded(.up)) - 1))]
        }
        let noAttachment = verdicts[Verdict.noAttachment.rawValue] ?? 0
        let attached = verdicts[Verdict.attached.rawValue] ?? 0
        let requested = recorded - noAttachment
        let summary = BatchSummary(
            total: items.count, recorded: recorded, processed: processed, skipped: skipped, interrupted: interrupted,
            verdicts: verdicts, reasons: reasons, requested: requested, attached: attached,
            displayRate: requested == 0 ? 1 : Double(attached) / Double(requested),
            downloadMilliseconds: [
                "p50": percentile(0.5), "p90": percentile(0.9), "p99": percentile(0.99), "max": times.last ?? 0,
            ],
            elapsedSeconds: (ContinuousClock.now - started).inSeconds)
        do {
            _ = try output.writeAtomically(Array((try BatchJSON.pretty(summary) + "\n").utf8), to: "summary.json")
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError("cannot encode summary.json: \(error)")
        }
        return summary
    }

    /// Calls `body` with each existing record of the current inputs, in input order, one at a time.
    public func forEachRecord(_ body: (BatchRecord) throws -> Void) rethrows {
        for item in items {
            guard let data = FileManager.default.contents(atPath: output.folder + "/" + recordName(item)),
                let record = try? BatchJSON.decoder.decode(BatchRecord.self, from: data)
            else { continue }
            try body(record)
        }
    }

    private static func write(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
    }
}

/// JSON as batch files use it: snake_case keys, sorted, one object per line.
public enum BatchJSON {
    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    public static func line<T: Encodable>(_ value: T) throws -> String {
        try encoder(pretty: false).encode(value).string + "\n"
    }

    public static func pretty<T: Encodable>(_ value: T) throws -> String {
        try encoder(pretty: true).encode(value).string
    }

    private static func encoder(pretty: Bool) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }
}

extension Data {
    fileprivate var string: String { String(decoding: self, as: UTF8.self) }
}
