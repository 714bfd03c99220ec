import Foundation
import POSIXKit
import RichPush
import Synchronization

/// A batch set up from its ``BatchConfiguration``: its payloads found, its output folder claimed and
/// checked against an earlier run's options, ready to `start()`.
///
/// ```swift
/// let session = try BatchSession(configuration)   // no payloads, options changed: ConfigurationError
/// defer { session.close() }
/// let run = try session.start()                   // the engine and the runner
/// defer { run.close() }
/// let summary = try await run.run()
/// ```
public struct BatchSession: Sendable {
    package let configuration: BatchConfiguration
    /// The payloads this run (or shard) covers.
    package let items: [BatchItem]
    private let store: AttachmentStore
    private let attachments: AttachmentStore
    private let lock: OutputLock
    /// This run's identity; a resume keeps the earlier run's id.
    package let identity: RunIdentity

    /// Reads the input, takes the output folder's lock and refuses a resume with other options
    /// (unless ``BatchConfiguration/force``); removes the leftovers of an interrupted run.
    package init(_ configuration: BatchConfiguration) throws {
        let everyItem = try BatchPreflight.items(at: configuration.input, recursive: configuration.recursive)
        // Every N-th payload by position in the (sorted) input: the same split on every run and machine.
        items =
            configuration.shard.map { shard in
                everyItem.enumerated().filter { shard.contains(position: $0.offset) }.map(\.element)
            } ?? everyItem
        guard !items.isEmpty else {
            throw ConfigurationError(
                .unusableInput,
                "no payloads in '\(configuration.input)' (looked for *.json\(configuration.recursive ? " below it" : ""))"
            )
        }
        // Before the folder is touched: a run that cannot hold its downloads' descriptors would fail
        // them as the host's fault (the limit is raised to the hard limit first).
        let need = DescriptorBudget.Need(
            concurrency: min(configuration.concurrency, items.count),
            relayed: configuration.policy.fetch.network != nil || configuration.networkMix != nil, storing: true,
            profiles: configuration.networkMix?.entries.count ?? 1)
        try DescriptorBudget.require(need, lowering: .concurrency)
        let out = configuration.outFolder
        store = try AttachmentStore(folder: out, durable: configuration.durable)
        // Before anything in the folder is touched: another batch's temporaries are not leftovers.
        lock = try OutputLock.acquire(folder: store.folder)
        do {
            attachments = try AttachmentStore(folder: out + "/attachments", durable: configuration.durable)
            var options = BatchPreflight.options(
                of: configuration.policy, sharedDownloads: configuration.sharedDownloads)
            if configuration.brazeRequests { options[Setting.brazeRequests.rawValue] = "on" }
            if let audience = configuration.audience { options[Setting.iosMix.rawValue] = audience.description }
            let changes = BatchPreflight.changedOptions(in: store.folder, now: options)
            if !changes.isEmpty && !configuration.force {
                throw ConfigurationError(
                    .changedSettings,
                    "\(out) holds results made with other settings: " + changes.joined(separator: "; ")
                        + ". Run with the earlier settings to resume, add \(Setting.force) to redo every payload "
                        + "with these, or choose another \(Setting.out).")
            }
            try BatchPreflight.record(options, in: store)
            let resumed = changes.isEmpty && !configuration.force ? Self.earlierRunID(in: store.folder) : nil
            let shard = configuration.shard ?? .whole
            identity = RunIdentity(
                runID: resumed ?? RunIdentity.newRunID(), shard: shard.index, shardCount: shard.count,
                optionsDigest: BatchPreflight.verdictDigest(
                    of: configuration.policy,
                    extra: [
                        "network-mix": configuration.networkMix.map { mix in
                            mix.entries.map { "\(NetworkAssignment.key($0.profile))=\($0.percent)" }
                                .joined(separator: ",")
                        } ?? "none",
                        "seed": String(configuration.seed),
                        "ios-mix": configuration.audience?.description ?? "none",
                    ]))
            if resumed == nil {
                _ = try store.writeAtomically(Array((identity.runs[0].id + "\n").utf8), to: ".richpush/run-id")
            }
        } catch {
            lock.release()
            throw error
        }
        store.removeLeftovers()
        attachments.removeLeftovers()
        self.configuration = configuration
    }

    /// The run id an earlier, unfinished or finished run in `folder` recorded (when it has a journal
    /// to resume), or nil.
    static func earlierRunID(in folder: String) -> String? {
        var info = stat()
        guard stat(folder + "/.richpush/journal.ndjson", &info) == 0, info.st_size > 0,
            let data = FileManager.default.contents(atPath: folder + "/.richpush/run-id"), data.count <= 64,
            let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
            !text.isEmpty, text.allSatisfy(\.isHexDigit)
        else { return nil }
        return text
    }

    /// The output folder, as the store resolved it.
    package var folder: String { store.folder }

    /// Starts the download engine and builds the runner; a failure to start throws ``FetchError``.
    package func start() throws -> BatchRun {
        let engine = try FetchEngine()
        let shared = configuration.sharedDownloads ? SharedDownloads(engine: engine, store: attachments) : nil
        // Records carry the sniffed MIME type; libmagic's description is worked out only where a message needs it.
        let service = ServiceExtension(
            engine: engine, sniffer: TypeSniffer(description: .unsupportedOnly), store: attachments,
            policy: configuration.policy, sharedDownloads: shared, tracker: configuration.tracker)
        var runner = BatchRunner(
            items: items, service: service, output: store, concurrency: configuration.concurrency,
            force: configuration.force)
        if let audience = configuration.audience {
            runner.networks = NetworkAssignment(
                mix: configuration.networkMix, audience: audience, devices: items.count, seed: configuration.seed,
                service: service)
        } else if let mix = configuration.networkMix {
            runner.networks = NetworkAssignment(
                mix: mix, devices: items.count, seed: configuration.seed, service: service)
        }
        runner.shard = configuration.shard.map { (index: $0.index, count: $0.count) }
        runner.thresholds = configuration.thresholds
        runner.brazeRequests = configuration.brazeRequests
        runner.identity = identity
        return BatchRun(
            engine: engine, shared: shared, runner: runner, attachments: attachments,
            inputFolder: configuration.input)
    }

    /// Releases the output folder's lock.
    package func close() { lock.release() }

    /// Runs a campaign as `richpush batch` does: every payload of the input not done yet (a rerun into
    /// the same output folder resumes), then the results, the summary and the gate. Whatever stops
    /// it throws `ConfigurationError`: an input that cannot be used is `unusable-input`, an output
    /// that cannot be written `unwritable-output`, an engine that cannot start `unavailable`.
    ///
    /// ```swift
    /// let summary = try await BatchSession.run(BatchConfiguration(input: "payloads", outFolder: "out"))
    /// print(summary.displayRate, summary.passed ?? true)
    /// ```
    public static func run(_ configuration: BatchConfiguration) async throws -> BatchSummary {
        do {
            return try await with(configuration) { _, run in
                let summary = try await run.run()
                await run.removeSharedDownloads()
                return summary
            }
        } catch let error as IOFailure {
            throw ConfigurationError(error)
        } catch let error as FetchError {
            throw ConfigurationError(.unavailable, error.engineStartMessage)
        }
    }

    /// A session and its started run for `body` alone: the engine is stopped, the scratch files are
    /// removed and the output folder's lock is released when `body` returns or throws.
    package static func with<T>(_ configuration: BatchConfiguration, _ body: (BatchSession, BatchRun) async throws -> T)
        async throws -> T
    {
        let session = try BatchSession(configuration)
        defer { session.close() }
        let run = try session.start()
        defer { run.close() }
        return try await body(session, run)
    }
}

/// A started batch: the engine, the shared downloads and the runner.
package struct BatchRun: Sendable {
    let engine: FetchEngine
    let shared: SharedDownloads?
    let runner: BatchRunner
    let attachments: AttachmentStore
    /// The batch's input (a folder, or an NDJSON file), for the JUnit classes.
    let inputFolder: String

    /// Runs every payload not done yet and writes the results and the summary.
    package func run(progress: @escaping @Sendable (BatchRunner.Progress) -> Void = { _ in }) async throws(StoreError)
        -> BatchSummary
    {
        try await runner.run(progress: progress)
    }

    /// Removes the shared downloads' files once every payload that used them is done.
    package func removeSharedDownloads() async { await shared?.removeAll() }

    /// Ends every download in flight at once, shared ones too (they end as cancelled: no record, redone
    /// on resume).
    package func stop() { engine.shutdown() }

    /// The JUnit XML report of every record in the output folder, in input order, then one case per
    /// threshold of the gate; `summary` (this run's) gives the suite its wall time, its start and the gate.
    package func junitXML(summary: BatchSummary, properties: [(name: String, value: String)] = []) throws(StoreError)
        -> String
    {
        var report = JUnitReport()
        report.wallSeconds = summary.elapsedSeconds
        report.timestamp = Date(timeIntervalSinceNow: -summary.elapsedSeconds)
        report.inputName = (inputFolder as NSString).lastPathComponent
        // A folder's payloads are under it; an NDJSON file's (or one payload file's) beside it.
        var isFolder: ObjCBool = false
        let folder = FileManager.default.fileExists(atPath: inputFolder, isDirectory: &isFolder) && isFolder.boolValue
        report.inputRoot = folder ? inputFolder : (inputFolder as NSString).deletingLastPathComponent
        report.properties =
            properties + [("richpush.options_digest", summary.identity?.optionsDigest ?? "")]
            + [("richpush.run_id", summary.identity?.runs.first?.id ?? "")]
        let positions = Dictionary(
            runner.items.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        try runner.forEachRecord { report.add($0, position: positions[$0.input] ?? Int.max - 1) }
        report.add(gate: summary.thresholds ?? [])
        return report.xml
    }

    /// Stops the engine and removes the attachments' scratch files.
    package func close() {
        engine.shutdown()
        attachments.removeScratch()
    }
}
