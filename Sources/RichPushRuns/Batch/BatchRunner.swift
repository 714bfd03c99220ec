import Foundation
import POSIXKit
import RichPush

/// Runs many payloads through one ``ServiceExtension``, concurrently, resumably, with nothing lost.
///
/// Layout of the output folder:
///
/// ```
/// OUTDIR/payloads/<input name>     the mutated payload (or {"richpush":{...}} for input that is no JSON object)
/// OUTDIR/attachments/              the stored attachments
/// OUTDIR/results.ndjson            one record per payload, in input order
/// OUTDIR/summary.json              counts, display rate, download-time percentiles
/// OUTDIR/.richpush/journal.ndjson  the resume state: records appended as payloads complete
/// ```
///
/// Outputs, `results.ndjson` and `summary.json` are written atomically (temporary file in the same
/// folder, then rename). A payload is complete when its output exists and the journal's last record
/// of it carries the SHA-256 of its input bytes as they are now (so an edited file, or an NDJSON line
/// that moved, is done again); the record is appended (one write) after the output is in place. A crash can only tear
/// the journal's last line, which the next run cuts off. A rerun skips complete payloads, and
/// `results.ndjson` is rebuilt from the journal's last record of each current input (the journal is
/// then compacted to the same lines), so after any sequence of interruptions and resumes every
/// input has exactly one record and one output. Cancelling the task running ``run(progress:)``
/// stops launching payloads and cancels downloads in flight; those payloads get no record and are
/// redone on the next run.
package struct BatchRunner: Sendable {
    package let items: [BatchItem]
    package let service: ServiceExtension
    /// The output folder (as a store: atomic writes inside it only).
    package let output: AttachmentStore
    /// Payloads in flight at once.
    package let concurrency: Int
    /// Redo payloads an earlier run completed.
    package let force: Bool

    /// How records reach the journal: write(2), or a test's failing writer.
    var journalWrite: Journal.Write = Journal.systemWrite
    /// How the journal's records are grouped into writes (tests make the groups small).
    var journalGrouping = Journal.Grouping.batch
    /// Each payload's network (drawn from a network mix), by its position in ``items``: the same draw on every
    /// resume. Nil: every payload runs ``service`` as it is.
    package var networks: NetworkAssignment?
    /// This run's shard of a larger input (shard I of N), named in `summary.json` for `report merge`.
    package var shard: (index: Int, count: Int)?
    /// The gate's thresholds, decided in `summary.json` (the defaults apply to the metrics these do not name).
    package var thresholds: [Threshold] = []
    /// The run's identity, named in `summary.json` for `report merge`.
    package var identity: RunIdentity?
    /// Every item is a Braze send request, composed before it runs (``ProcessResult/composing(_:name:with:)``).
    package var brazeRequests = false

    package init(items: [BatchItem], service: ServiceExtension, output: AttachmentStore, concurrency: Int, force: Bool)
    {
        self.items = items
        self.service = service
        self.output = output
        self.concurrency = max(1, concurrency)
        self.force = force
    }

    /// The largest payload read; anything longer is over APNs' limit, and only its size matters.
    static let readLimit = 1 << 20

    /// Progress as payloads start and finish.
    package struct Progress: Sendable {
        package var total: Int
        package var skipped: Int
        package var done: Int
        /// Payloads started and not finished.
        package var inFlight: Int = 0
        package var verdicts: [Verdict: Int]
        package var started: ContinuousClock.Instant
    }

    private var journalPath: String { output.folder + "/.richpush/journal.ndjson" }

    /// Processes every incomplete payload, then writes `results.ndjson` and `summary.json`.
    package func run(progress: @escaping @Sendable (Progress) -> Void = { _ in }) async throws(StoreError)
        -> BatchSummary
    {
        let started = ContinuousClock.now
        let items = self.items
        let positions = Dictionary(items.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        let output = self.output
        let force = self.force
        let (journalPath, journalWrite, journalGrouping) = (self.journalPath, self.journalWrite, self.journalGrouping)
        // Reading the journal and checking outputs block: off the cooperative pool.
        let scan = await Offload.run { () -> Result<(Journal, [BatchItem]), StoreError> in
            do throws(StoreError) {
                try Journal.prepare(
                    path: journalPath, fresh: force, keeping: Set(items.map(\.name)), store: output)
                let journal = try Journal(path: journalPath, write: journalWrite, grouping: journalGrouping)
                guard !force else { return .success((journal, items)) }
                // Complete: recorded with the digest of the input as it is now, and its output in place.
                let recorded = try journal.lastDigests()
                return .success(
                    (
                        journal,
                        items.filter { item in
                            guard let digest = recorded[item.name],
                                FileManager.default.fileExists(atPath: output.folder + "/payloads/" + item.outputName),
                                case .success(let bytes) = item.read(limit: Self.readLimit)
                            else { return true }
                            return Self.sha256(bytes) != digest
                        }
                    ))
            } catch {
                return .failure(error)
            }
        }
        let (journal, pending) = try scan.get()
        var state = Progress(
            total: items.count, skipped: items.count - pending.count, done: 0, verdicts: [:], started: started)
        progress(state)
        var storeFailure: StoreError?
        await withTaskGroup(of: Result<Verdict?, StoreError>.self) { group in
            var next = 0
            func launch() {
                let item = pending[next]
                next += 1
                state.inFlight += 1
                let position = positions[item.name] ?? 0
                group.addTask { await process(item, position: position, journal: journal) }
            }
            while next < pending.count && next < concurrency { launch() }
            progress(state)
            for await finished in group {
                state.inFlight -= 1
                switch finished {
                case .success(let verdict?):
                    state.done += 1
                    state.verdicts[verdict, default: 0] += 1
                    progress(state)
                case .success(nil):
                    progress(state)
                case .failure(let error):
                    storeFailure = storeFailure ?? error
                    group.cancelAll()
                }
                if next < pending.count && !Task.isCancelled && storeFailure == nil { launch() }
            }
        }
        // The records still waiting for their group: written before anything reads the journal.
        let flushed = await Offload.run { () -> StoreError? in
            do throws(StoreError) {
                try journal.flush()
                return nil
            } catch {
                return error
            }
        }
        if let storeFailure = storeFailure ?? flushed { throw storeFailure }
        let (done, skipped, interrupted) = (state.done, state.skipped, Task.isCancelled)
        let runner = self
        return try await Offload.run { () -> Result<BatchSummary, StoreError> in
            do throws(StoreError) {
                return .success(
                    try runner.finish(
                        journal: journal, processed: done, skipped: skipped, interrupted: interrupted, started: started)
                )
            } catch {
                return .failure(error)
            }
        }.get()
    }

    /// One payload: process, write the output, then append the record. Nil when cancelled before finishing.
    private func process(_ item: BatchItem, position: Int, journal: Journal) async -> Result<Verdict?, StoreError> {
        let result: ProcessResult
        var digest: String?
        let (service, network) =
            networks?.service(for: position)
            ?? (self.service, self.service.policy.fetch.network.map { NetworkAssignment.key($0) })
        let exhaustion = DescriptorExhaustion.generation
        switch await Offload.run({ item.read(limit: Self.readLimit) }) {
        case .success(let bytes):
            digest = Self.sha256(bytes)
            result =
                brazeRequests
                ? await ProcessResult.composing(bytes, name: item.name, with: service) : await service.process(bytes)
        case .failure(let error):
            // A system call's message already ends with its sentence and advice.
            let message = error.systemError == nil ? error.message + ". Check the file." : error.message
            result = .unreadable(message, outOfDescriptors: DescriptorExhaustion.generation != exhaustion)
        }
        if Task.isCancelled || result.outcome.reason == .cancelled { return .success(nil) }
        let outputName = "payloads/" + item.outputName
        let body =
            result.mutatedPayload ?? JSONValue.object([("richpush", result.outcome.payloadSummary)]).utf8
        let record = BatchRecord(
            item: item, output: outputName, outcome: result.outcome, inputSha256: digest, network: network,
            phone: networks?.phone(for: position))
        let output = self.output
        return await Offload.run {
            do {
                _ = try output.writeAtomically(body, to: outputName)
                try journal.append(Array(record.jsonLine.utf8))
            } catch let error as StoreError {
                return .failure(error)
            } catch {
                return .failure(StoreError.output("cannot encode the record of \(item.name): \(error)"))
            }
            return .success(result.outcome.verdict)
        }
    }
}
