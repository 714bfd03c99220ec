import POSIXKit

/// One payload's run as `richpush process` makes it: the store the attachment goes to (which
/// remembers the files it made, to take them back), a one-loop engine, and the extension.
///
/// ```swift
/// let session = try ProcessSession(policy: policy, folder: "richpush-out")
/// defer { session.close() }
/// let result = await session.process(bytes)
/// ```
public struct ProcessSession: Sendable {
    private let store: AttachmentStore
    private let engine: FetchEngine
    private let service: ServiceExtension

    /// A session whose attachments go to `folder` (made when missing; `durable`: each file is flushed
    /// to disk before it gets its name). A folder that cannot be written is `unwritable-output`; an
    /// engine that cannot start, `unavailable`; an open-file limit that cannot hold one download and
    /// the 64 descriptors richpush keeps for itself (after raising the soft limit to the hard one),
    /// `too-few-descriptors`, before anything is made.
    public init(policy: ExtensionPolicy, folder: String, durable: Bool = false) throws(ConfigurationError) {
        try self.init(policy: policy, folder: folder, durable: durable, tracker: nil)
    }

    /// A session that also logs a delivery event per payload through `tracker` (`--track-endpoint`).
    package init(policy: ExtensionPolicy, folder: String, durable: Bool, tracker: DeliveryTracker?)
        throws(ConfigurationError)
    {
        // A run that reached its last descriptor would leave none for the runtime, which stops the
        // process when it cannot open one (see DescriptorBudget.shortfall(single:)).
        try DescriptorBudget.require(
            DescriptorBudget.Need(concurrency: 1, relayed: policy.fetch.network != nil, storing: true), lowering: nil)
        do { store = try AttachmentStore(folder: folder, durable: durable, recordsNewFiles: true) } catch {
            throw ConfigurationError(.unwritableOutput, error.message, setting: nil)
        }
        do { engine = try FetchEngine(loops: 1) } catch {
            store.removeScratch()
            throw ConfigurationError(.unavailable, error.engineStartMessage)
        }
        service = ServiceExtension(engine: engine, store: store, policy: policy, tracker: tracker)
    }

    /// A session for `body` alone: it is closed when `body` returns or throws, whatever happens.
    ///
    /// ```swift
    /// let result = try await ProcessSession.with(policy: ExtensionPolicy(), folder: "out") { session in
    ///     await session.process(Array(payload.utf8))
    /// }
    /// print(result.outcome.verdict, result.outcome.reason)
    /// ```
    public static func with<T>(
        policy: ExtensionPolicy, folder: String, durable: Bool = false, _ body: (ProcessSession) async throws -> T
    ) async throws -> T {
        try await with(policy: policy, folder: folder, durable: durable, tracker: nil, body)
    }

    /// ``with(policy:folder:durable:_:)`` with a delivery tracker (`--track-endpoint`).
    package static func with<T>(
        policy: ExtensionPolicy, folder: String, durable: Bool, tracker: DeliveryTracker?,
        _ body: (ProcessSession) async throws -> T
    ) async throws -> T {
        let session = try ProcessSession(policy: policy, folder: folder, durable: durable, tracker: tracker)
        defer { session.close() }
        return try await body(session)
    }

    /// Runs `bytes` through the extension.
    public func process(_ bytes: [UInt8]) async -> ProcessResult { await service.process(bytes) }

    /// Removes the files this run stored: an output that names them could not be written.
    public func removeNewFiles() { store.removeNewFiles() }

    /// Stops the engine and removes the store's scratch files, and the output folder when this run
    /// made it and stored nothing in it.
    public func close() {
        engine.shutdown()
        store.removeScratch()
        store.removeMadeFoldersIfEmpty()
    }
}

extension FetchError {
    /// Why the fetch engine could not start, in words: out of file descriptors is said as such.
    public var engineStartMessage: String {
        guard code == .tooManyOpenFiles else { return "\(message)" }
        return "cannot start the download engine: too many open files (the limit is "
            + "\(DescriptorBudget.softLimitText)). Raise it with 'ulimit -n 1024' and run again."
    }
}

extension Outcome {
    /// The verdict line, with every payload-derived text escaped so it stays on its own lines.
    public var escapedSummaryLine: String {
        var shown = self
        shown.message = message.escapingControlCharacters
        shown.hint = hint?.escapingControlCharacters
        shown.warnings = warnings.map {
            Warning($0.code.escapingControlCharacters, $0.message.escapingControlCharacters)
        }
        shown.attachment?.file = attachment?.file?.escapingControlCharacters
        return shown.summaryLine
    }
}
