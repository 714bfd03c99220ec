import Foundation

/// One payload through the emulated service extension: the outcome, and the mutated payload.
public struct ProcessResult: Sendable {
    public var outcome: Outcome
    /// The original payload text plus the `richpush` member; nil when the input was not a JSON object.
    public var mutatedPayload: [UInt8]?

    public init(outcome: Outcome, mutatedPayload: [UInt8]?) {
        self.outcome = outcome
        self.mutatedPayload = mutatedPayload
    }

    /// The result for input that could not be read at all.
    /// The payload could not be read; when this process had no file descriptor left to open it, that is
    /// the client's failure (`too-many-open-files`), which a batch redoes on resume, not a bad input.
    public static func unreadable(_ message: String, outOfDescriptors: Bool = false) -> ProcessResult {
        ProcessResult(
            outcome: Outcome(
                verdict: outOfDescriptors ? .fallback : .rejected,
                reason: outOfDescriptors ? .tooManyOpenFiles : .unreadableInput, message: message, payloadBytes: 0),
            mutatedPayload: nil)
    }
}

/// The emulated Notification Service Extension: payload in, verdict, attachment and mutated payload out.
///
/// Stages: read (APNs rules), invocation (`mutable-content`, alert), Braze's `ab.att`, policy (ATS,
/// budget, caps), fetch, sniff and validate, store, emit. The budget is one deadline from the
/// moment ``process(_:)`` starts, as on the device. Safe to call from many tasks at once.
///
/// ```swift
/// let service = ServiceExtension(engine: engine, store: try AttachmentStore(folder: "out"))
/// let result = await service.process(Array(payloadData))
/// print(result.outcome.verdict)
/// ```
public struct ServiceExtension: Sendable {
    public let engine: FetchEngine
    public let sniffer: TypeSniffer
    /// Where attachments are kept; `nil` keeps none (a bench without an output folder): the body is sniffed and
    /// hashed as it arrives and then dropped, and the verdict is the same.
    public let store: AttachmentStore?
    public private(set) var policy: ExtensionPolicy
    /// When set, each URL is downloaded once and shared by every payload that names it.
    public let sharedDownloads: SharedDownloads?
    /// When set (delivery tracking is on), each payload's delivery event is recorded for `/users/track`.
    public let tracker: DeliveryTracker?
    /// Whether ``ProcessResult/mutatedPayload`` is written; a bench, which reads only the outcome,
    /// turns it off (about a tenth of a bench device's CPU).
    public var emitsPayload = true
    /// What the sniffer said of each input it read (a download's kept head and media facts) for this
    /// extension: a campaign sends every device the same asset, and the same input always sniffs the same.
    /// Shared by the copies ``over(_:)`` makes.
    let sniffs = SniffCache()

    public init(
        engine: FetchEngine, sniffer: TypeSniffer = TypeSniffer(), store: AttachmentStore?,
        policy: ExtensionPolicy = ExtensionPolicy(), sharedDownloads: SharedDownloads? = nil,
        tracker: DeliveryTracker? = nil
    ) {
        self.tracker = tracker
        self.engine = engine
        self.sniffer = sniffer
        self.store = store
        self.policy = policy
        self.sharedDownloads = sharedDownloads
    }

    /// This extension over another network (`nil`: loopback), everything else the same: the store,
    /// the engine, the sniff cache and whether the payload is emitted.
    public func over(_ network: NetworkProfile?) -> ServiceExtension {
        var copy = self
        copy.policy.fetch.network = network
        return copy
    }

    public func process(_ bytes: [UInt8]) async -> ProcessResult {
        await process(bytes, arrivedAt: .now)
    }

    /// Processes a payload that reached the device at `arrival`: the budget (and the elapsed time
    /// reported) counts from then, even if the run started later (the burst benchmark's open loop).
    public func process(_ bytes: [UInt8], arrivedAt arrival: ContinuousClock.Instant) async -> ProcessResult {
        await process(prepare(bytes), arrivedAt: arrival)
    }

    /// A payload read once for many deliveries: stages 1 to 4 (APNs rules, invocation, Braze's
    /// `ab.att`, policy) depend on the bytes and the policy only, so a bench reads its payload and
    /// decides its URL once per run, and each device starts at the download, the part a phone
    /// really does on its own. ``process(_:arrivedAt:)`` of the same bytes gives the same result.
    public struct PreparedPayload: Sendable {
        let bytes: [UInt8]
        let stage: Stage

        enum Stage: Sendable {
            /// Decided before any download: the outcome (its elapsed time is set per delivery).
            case decided(Outcome, root: JSONValue?)
            /// An attachment: what the payload asks for, and what the policy says of its URL.
            case attachment(Attachment, root: JSONValue)
        }

        struct Attachment: Sendable {
            let url: String
            let declared: String
            let format: AttachmentFormat
            let fileExtension: String
            let warnings: [Warning]
            let admission: Admission
        }

        /// The same payload asking for `url`: a bench template's expansion for one device, which
        /// differs from the URL the policy judged only in digits and letters of its path or query, so
        /// the judgement holds (the payload's bytes still name the judged URL; a bench emits none).
        func retargeted(to url: String) -> PreparedPayload {
            guard case .attachment(let attachment, let root) = stage else { return self }
            var admission = attachment.admission
            if case .fetch(_, let policy, let cap) = admission {
                admission = .fetch(url: url, policy: policy, cap: cap)
            }
            let moved = Attachment(
                url: url, declared: attachment.declared, format: attachment.format,
                fileExtension: attachment.fileExtension, warnings: attachment.warnings, admission: admission)
            return PreparedPayload(bytes: bytes, stage: .attachment(moved, root: root))
        }
    }

    /// What the policy says of an attachment's URL before anything is fetched.
    enum Admission: Sendable {
        case decided(Outcome)
        /// Fetch `url` (as `URL(string:)` reads it, see ``AttachmentURL``) under `policy`, whose `maxBytes` is the class cap `cap`.
        case fetch(url: String, policy: FetchPolicy, cap: Int64)
    }

    /// Reads `bytes` as far as it can without a download (see ``PreparedPayload``).
    public func prepare(_ bytes: [UInt8]) -> PreparedPayload {
        switch inspect(bytes) {
        case .decided(let outcome, let root):
            return PreparedPayload(bytes: bytes, stage: .decided(outcome, root: root))
        case .attachment(let url, let declared, let format, let root, let warnings):
            let reading = AttachmentURL(url)
            let admission = admit(reading, format: format, payloadBytes: bytes.count)
            var urlWarnings: [Warning] = []
            if case .fetch = admission { urlWarnings = reading.warnings }
            let attachment = PreparedPayload.Attachment(
                url: url, declared: declared, format: format,
                fileExtension: AttachmentFormat.normalizedExtension(declared), warnings: warnings + urlWarnings,
                admission: admission)
            return PreparedPayload(bytes: bytes, stage: .attachment(attachment, root: root))
        }
    }

    /// Delivers a prepared payload that reached the device at `arrival` (see ``process(_:arrivedAt:)``).
    public func process(_ prepared: PreparedPayload, arrivedAt arrival: ContinuousClock.Instant) async
        -> ProcessResult
    {
        let (outcome, root) = await run(prepared, deadline: arrival + policy.budget)
        return emit(outcome, root: root, bytes: prepared.bytes, started: arrival)
    }

    /// The last stage: the elapsed time, the delivery event, the content extension, the mutated payload.
    @inline(never)
    private func emit(_ outcome: Outcome, root: JSONValue?, bytes: [UInt8], started: ContinuousClock.Instant)
        -> ProcessResult
    {
        var outcome = outcome
        // To 0.01 ms, what a wall time means here (the JSON then reads 52.31, not 52.309871).
        outcome.elapsedMilliseconds = Rounding.milliseconds((ContinuousClock.now - started).inMilliseconds)
        // Path A: the delivery event is recorded now and sent by the command after the verdicts.
        if let tracker, outcome.verdict != .rejected, !tracker.record(outcome, payload: root) {
            outcome.warnings.append(DeliveryTracker.missingBrazeIDWarning)
        }
        // Any push with an alert can be expanded, whether or not the service extension ran.
        if let app = policy.app, !app.contentExtensions.isEmpty, outcome.verdict != .rejected,
            outcome.reason != .noAlert
        {
            outcome.contentExtension = ContentRouter(
                extensions: app.contentExtensions, requiredKeys: policy.requiredKeys
            ).route(root)
        }
        guard let root, case .object(let members) = root else {
            return ProcessResult(outcome: outcome, mutatedPayload: nil)
        }
        if root["richpush"] != nil {
            outcome.warnings.append(
                Warning(
                    "richpush-key-replaced",
                    "the payload already has a top-level 'richpush' key; the added one comes last and wins in JSON parsers."
                ))
        }
        guard emitsPayload else { return ProcessResult(outcome: outcome, mutatedPayload: nil) }
        let mutated = PayloadText.inserting(
            key: "richpush", value: outcome.payloadSummary, into: bytes, isEmpty: members.isEmpty)
        return ProcessResult(outcome: outcome, mutatedPayload: mutated)
    }

    private func run(_ prepared: PreparedPayload, deadline: ContinuousClock.Instant) async -> (Outcome, JSONValue?) {
        switch prepared.stage {
        case .decided(let outcome, let root):
            return (outcome, root)
        case .attachment(let attachment, let root):
            var outcome: Outcome
            switch attachment.admission {
            case .decided(let decided):
                outcome = decided
            case .fetch(let url, let policy, let cap):
                outcome = await attach(
                    FetchRequest(url: url, deadline: deadline, policy: policy), cap: cap, format: attachment.format,
                    fileExtension: attachment.fileExtension, payloadBytes: prepared.bytes.count)
            }
            return (Self.describe(outcome, attachment), root)
        }
    }

    /// The outcome with what the payload asked for and the payload's own warnings first.
    @inline(never)
    private static func describe(_ outcome: Outcome, _ attachment: PreparedPayload.Attachment) -> Outcome {
        var outcome = outcome
        outcome.url = attachment.url
        outcome.declaredType = attachment.declared
        outcome.warnings = attachment.warnings + outcome.warnings
        return outcome
    }

    /// Stages 1 to 3: read, invocation, Braze's `ab.att` (out of the async frame, see ``attach``).
    @inline(never)
    private func inspect(_ bytes: [UInt8]) -> Inspection {
        PayloadInspector.inspect(bytes, pushType: policy.pushType)
    }

    /// Stages 4 to 7 for a well-formed request.
    ///
    /// Async functions keep every value that might live across a suspension in a heap-allocated frame
    /// for as long as the call lasts, so the async path holds only what crosses an `await`; the
    /// checks and messages before and after run in synchronous functions (`@inline(never)` keeps them
    /// out of the frame). With thousands of devices in flight this was most of a device's memory.
    private func attach(
        _ request: FetchRequest, cap: Int64, format: AttachmentFormat, fileExtension: String, payloadBytes: Int
    ) async -> Outcome {
        let exhaustion = DescriptorExhaustion.generation
        let outcome = await fetchAndJudge(
            request, cap: cap, format: format, fileExtension: fileExtension, payloadBytes: payloadBytes)
        return Self.blamingDescriptorExhaustion(outcome, since: exhaustion)
    }

    /// The failures a host can cause that are really this process's own when it ran out of file
    /// descriptors meanwhile: the connection, TLS, the resolver's files, the store and the sniffer
    /// cannot open what they need, and fail with their own words.
    static let failuresDescriptorExhaustionCauses: Set<ReasonCode> = [
        .dnsFailed, .connectFailed, .connectTimeout, .tlsFailed, .connectionReset, .protocolError, .transferFailed,
        .truncated, .storageFailed,
    ]

    /// `outcome`, or `too-many-open-files` when it failed as ``failuresDescriptorExhaustionCauses``
    /// say and the process ran out of descriptors since `generation` (``DescriptorExhaustion``): such
    /// a verdict says nothing about the host, and a batch does not keep it as final.
    @inline(never)
    static func blamingDescriptorExhaustion(
        _ outcome: Outcome, since generation: Int, now: Int = DescriptorExhaustion.generation
    ) -> Outcome {
        guard failuresDescriptorExhaustionCauses.contains(outcome.reason), now != generation else { return outcome }
        var blamed = outcome
        blamed.verdict = .fallback
        blamed.reason = .tooManyOpenFiles
        blamed.message =
            "richpush ran out of file descriptors during this download (the limit is \(DescriptorBudget.softLimitText)): "
            + "the client's limit, not the host's, so the host was not really tested. Raise it with 'ulimit -n' or run "
            + "fewer downloads at once. (What failed: \(outcome.message))"
        blamed.hint = nil
        blamed.tlsProblem = nil
        return blamed
    }

    private func fetchAndJudge(
        _ request: FetchRequest, cap: Int64, format: AttachmentFormat, fileExtension: String, payloadBytes: Int
    ) async -> Outcome {
        let deadline = request.deadline
        // 5. Fetch into a temporary file in the output folder (or share one download of the URL, or
        // keep nothing when there is no store).
        switch await download(request) {
        case .success(let (temporary, result)):
            // Without a store (no temporary) nothing is written: the sniff is CPU work like the rest
            // (libmagic on the bytes kept in memory, one cookie per core), done here without two
            // thread hand-offs.
            guard let temporary else {
                return judge(
                    nil, result: result, format: format, fileExtension: fileExtension, cap: cap, deadline: deadline,
                    payloadBytes: payloadBytes)
            }
            // Writing blocks: it runs off the cooperative pool.
            return await Offload.run {
                defer { temporary.discard() }
                return self.judge(
                    temporary, result: result, format: format, fileExtension: fileExtension, cap: cap,
                    deadline: deadline, payloadBytes: payloadBytes)
            }
        case .failure(let error):
            return downloadFailure(error, cap: cap, format: format, payloadBytes: payloadBytes)
        }
    }

    /// Stage 4, policy (App Transport Security and the class cap): the outcome when the URL cannot be
    /// fetched, or the URL and policy to fetch it with.
    @inline(never)
    private func admit(_ reading: AttachmentURL, format: AttachmentFormat, payloadBytes: Int) -> Admission {
        func finish(_ verdict: Verdict, _ reason: ReasonCode, _ message: String, hint: String? = nil) -> Admission {
            .decided(
                Outcome(verdict: verdict, reason: reason, message: message, hint: hint, payloadBytes: payloadBytes))
        }
        // The URL the extension's URL(string:) makes of the text: nothing trimmed, nothing repaired.
        let url = reading.written
        if let (message, hint) = reading.refusal {
            return finish(.fallback, .invalidURL, message, hint: hint)
        }
        guard let requested = reading.requested, let scheme = reading.scheme else {
            return finish(.fallback, .invalidURL, "'ab.att.url' ('\(url)') is not an absolute URL (UNError 100).")
        }
        if let app = policy.app {
            if case .blocked(_, let message, let hint) = app.transportSecurity.decide(requested) {
                return finish(.fallback, .atsBlocked, message.hasSuffix(".") ? message : message + ".", hint: hint)
            }
        } else if scheme == "http" && !policy.fetch.allowHTTP {
            return finish(
                .fallback, .atsBlocked,
                "\(requested) is plain http: App Transport Security blocks it in an extension without an arbitrary-loads "
                    + "exception. Serve the asset over https (or pass \(Setting.allowHTTP) to emulate such an exception)."
            )
        }
        guard scheme == "https" || scheme == "http" else {
            return finish(
                .fallback, .schemeNotAllowed, "\(scheme):// URLs cannot be downloaded by the extension: use https.")
        }
        var fetchPolicy = policy.fetch
        fetchPolicy.transportSecurity = policy.app?.transportSecurity
        let cap = policy.maxBytes(for: format.attachmentClass)
        fetchPolicy.maxBytes = cap
        // The sniffer's bytes and the SHA-256 are kept as the body arrives: nothing is read back.
        fetchPolicy.keepsBodySummary = true
        // The hash names the stored file; with no store (a bench without an output folder) it is not computed.
        fetchPolicy.hashesBody = store != nil
        return .fetch(url: requested, policy: fetchPolicy, cap: cap)
    }

    /// The outcome of a download that failed.
    @inline(never)
    private func downloadFailure(_ error: FetchError, cap: Int64, format: AttachmentFormat, payloadBytes: Int)
        -> Outcome
    {
        var outcome = failure(error, cap: cap, format: format, payloadBytes: payloadBytes)
        outcome.download = error.details.map(Outcome.Download.init)
        outcome.trace = error.details?.trace?.rendered
        return outcome
    }

    /// Stages 6 and 7: sniff, validate, store.
    private func judge(
        _ temporary: TemporaryFile?, result: FetchResult, format: AttachmentFormat, fileExtension: String, cap: Int64,
        deadline: ContinuousClock.Instant, payloadBytes: Int
    ) -> Outcome {
        func finish(_ verdict: Verdict, _ reason: ReasonCode, _ message: String) -> Outcome {
            Outcome(verdict: verdict, reason: reason, message: message, payloadBytes: payloadBytes)
        }
        if result.bytes > cap {
            var outcome = failure(
                FetchError(.tooLarge, "shared download over the cap"), cap: cap, format: format,
                payloadBytes: payloadBytes)
            outcome.download = Outcome.Download(result)
            outcome.trace = result.trace?.rendered
            return outcome
        }
        var warnings: [Warning] = []
        let sniff: Sniff
        do { sniff = try sniffs.sniff(body: result.body, with: sniffer) } catch {
            var outcome = finish(
                .fallback, .storageFailed, "cannot sniff the download: \(error.message) (UNError 104).")
            outcome.download = Outcome.Download(result)
            outcome.trace = result.trace?.rendered
            return outcome
        }
        if let header = result.contentType, let sniffed = sniff.format, AttachmentFormat.forMIME(header) != sniffed {
            warnings.append(
                Warning(
                    "content-type-mismatch",
                    "the server sends Content-Type '\(header)' for \(sniffed.name) bytes; iOS ignores it, "
                        + "but other SDKs and caches rely on it."))
        }
        if format.attachmentClass == .image && result.bytes > policy.brazeImageAdvisoryBytes {
            warnings.append(
                Warning(
                    "image-over-braze-advice",
                    "the image is \(result.bytes) bytes; Braze advises at most 5 MB (about 500 KB recommended)."))
        }
        let decision = AttachmentValidator.validate(declared: format, sniff: sniff)
        var outcome: Outcome
        switch decision {
        case .reject(let reason, let message):
            outcome = finish(.fallback, reason, message)
        case .attach(let more):
            warnings += more
            guard ContinuousClock.now < deadline else {
                outcome = finish(.expired, .deadlineExceeded, "the budget ran out before the attachment was stored.")
                break
            }
            // 7. Store under a generated name with the normalised declared extension, which iOS reads.
            let known = result.body.sha256.map { (sha256: $0, bytes: result.bytes) }
            guard let store, let temporary else {
                outcome = finish(.attached, .ok, "the \(format.attachmentClass.rawValue) would show (\(format.uti)).")
                outcome.attachment = Outcome.Attachment(
                    file: nil, uti: format.uti, bytes: result.bytes, sha256: nil,
                    type: fileExtension, attachmentClass: format.attachmentClass)
                break
            }
            do {
                let stored = try store.commit(temporary, fileExtension: fileExtension, known: known)
                outcome = finish(.attached, .ok, "the \(format.attachmentClass.rawValue) would show (\(format.uti)).")
                outcome.attachment = Outcome.Attachment(
                    file: stored.path, uti: format.uti, bytes: stored.bytes, sha256: stored.sha256,
                    type: fileExtension, attachmentClass: format.attachmentClass)
            } catch {
                outcome = finish(.fallback, .storageFailed, "\(error.message) (UNError 104).")
            }
        }
        outcome.download = Outcome.Download(result)
        outcome.trace = result.trace?.rendered
        outcome.sniff = sniff
        outcome.warnings += warnings
        return outcome
    }

    /// Downloads into a new temporary file, or links the run's shared download of the URL.
    @inline(never)
    private func download(_ request: FetchRequest) async -> Result<(TemporaryFile?, FetchResult), FetchError> {
        guard let store else {
            do throws(FetchError) {
                return .success((nil, try await engine.fetch(request, writingTo: -1)))
            } catch {
                return .failure(error)
            }
        }
        if let sharedDownloads {
            var widest = request
            widest.policy.maxBytes = policy.maxBytes(for: .movie)
            switch await sharedDownloads.download(widest) {
            case .failure(let error): return .failure(error)
            case .success(let (path, result)):
                do throws(StoreError) { return .success((try store.makeTemporary(linking: path), result)) } catch {
                    return .failure(FetchError(storing: error))
                }
            }
        }
        let temporary: TemporaryFile
        do throws(StoreError) { temporary = try store.makeAttachmentTemporary() } catch {
            return .failure(FetchError(storing: error, " Check the \(Setting.out) folder."))
        }
        do throws(FetchError) {
            return .success((temporary, try await engine.fetch(request, writingTo: temporary.descriptor)))
        } catch {
            temporary.discard()
            return .failure(error)
        }
    }

    /// Why an expired download could not make it under the fetch policy's network profile: the time
    /// the asset needs at that profile (sized by its declared Content-Length) and the largest that fits.
    private func networkHint(_ details: FetchResult?, format: AttachmentFormat) -> String? {
        guard let profile = policy.fetch.network else { return nil }
        let secure = details.map { !$0.effectiveURL.lowercased().hasPrefix("http:") } ?? true
        guard let bytes = details?.contentLength, bytes > 0 else {
            return TransferEstimate.hint(profile: profile, budget: policy.budget, secure: secure)
        }
        return TransferEstimate(profile: profile, bytes: bytes, secure: secure)
            .hint(budget: policy.budget, kind: format.name.uppercased())
    }

    /// A response that is not 2xx (a 4xx, a 5xx, or a 3xx URLSession does not follow): what the phone shows.
    ///
    /// A download task does not fail on an HTTP status: it completes with the response body saved and
    /// no error. Braze's extension (its published sample, read; the Swift SDK's extension is closed) only
    /// checks the task's error, so it moves that body under the declared type and creates the
    /// attachment from it. The phone then shows what iOS makes of those bytes: nearly always an HTML or
    /// JSON error page, which UNNotificationAttachment refuses (the plain notification shows); a server
    /// that answers 404 with a placeholder image gets that image shown, not the asset.
    private func errorBodyOutcome(_ error: FetchError, format: AttachmentFormat, payloadBytes: Int) -> Outcome {
        let status = error.details?.httpStatus ?? 0
        let bytes = error.details?.bytes ?? 0
        let suffix = format.extensions[0]
        let said =
            "\(error.message). A download task does not fail on an HTTP status: Braze's extension saves the "
            + "\(bytes)-byte response body as .\(suffix) and creates the attachment from it"
        let sniff = error.details.flatMap { try? sniffs.sniff(body: $0.body, with: sniffer) }
        guard let sniff, case .attach = AttachmentValidator.validate(declared: format, sniff: sniff) else {
            let what =
                sniff.map { $0.mime == "application/x-empty" ? "empty" : "\($0.mime) (\($0.description))" }
                ?? "unreadable"
            var outcome = Outcome(
                verdict: .fallback, reason: .httpStatus,
                message: said + ", which iOS refuses: the body is \(what), not \(format.name) (UNError 101); "
                    + "the phone shows the plain notification.",
                payloadBytes: payloadBytes)
            outcome.sniff = sniff
            return outcome
        }
        var outcome = Outcome(
            verdict: .attached, reason: .ok,
            message: said + ": the body is \(sniff.format?.name ?? format.name) bytes, so the phone shows the "
                + "server's error \(format.attachmentClass.rawValue) instead of the asset (richpush does not store it).",
            payloadBytes: payloadBytes)
        outcome.warnings = [
            Warning(
                "error-body-attached",
                "HTTP \(status): the error response is itself a \(format.attachmentClass.rawValue), which the phone "
                    + "shows in place of the asset; fix the URL or the object behind it.")
        ]
        outcome.attachment = Outcome.Attachment(
            file: nil, uti: format.uti, bytes: bytes, sha256: nil, type: suffix, attachmentClass: format.attachmentClass
        )
        outcome.sniff = sniff
        return outcome
    }

    @inline(never)
    private func failure(_ error: FetchError, cap: Int64, format: AttachmentFormat, payloadBytes: Int) -> Outcome {
        func make(_ verdict: Verdict, _ reason: ReasonCode, _ message: String? = nil) -> Outcome {
            Outcome(
                verdict: verdict, reason: reason, message: message ?? error.message + ".", payloadBytes: payloadBytes)
        }
        // Every code is named: a new one does not compile until it is mapped here.
        switch error.code.kind {
        case .deadlineExceeded:
            let budget = String(format: "%g", policy.budget.inSeconds)
            let received = error.details.map { " (\($0.bytes) bytes had arrived)" } ?? ""
            var outcome = make(
                .expired, .deadlineExceeded,
                "\(error.details?.effectiveURL ?? "the asset") did not finish within the extension's \(budget) s budget"
                    + "\(received): iOS would call serviceExtensionTimeWillExpire and show the plain notification.")
            outcome.hint = networkHint(error.details, format: format)
            return outcome
        case .tooLarge:
            return make(
                .fallback, .fileTooLarge,
                AttachmentValidator.tooLargeMessage(format.attachmentClass, cap: cap)
                    + "; the download was stopped early.")
        case .invalidURL: return make(.fallback, .invalidURL)
        case .schemeNotAllowed: return make(.fallback, .schemeNotAllowed)
        case .redirectNotAllowed:
            let ats = !policy.fetch.allowHTTP && error.redirectTarget?.lowercased().hasPrefix("http:") == true
            return make(
                .fallback, ats ? .atsBlocked : .redirectNotAllowed,
                error.message + (ats ? ": App Transport Security blocks the redirect to http." : "."))
        case .tooManyRedirects: return make(.fallback, .tooManyRedirects)
        case .dnsFailed: return make(.fallback, .dnsFailed)
        case .connectFailed: return make(.fallback, .connectFailed)
        case .connectTimeout: return make(.fallback, .connectTimeout)
        case .tlsFailed:
            var outcome = make(.fallback, .tlsFailed)
            outcome.hint = error.hint
            outcome.tlsProblem = error.tlsProblem
            return outcome
        case .stalled: return make(.fallback, .stalled)
        case .httpStatus: return errorBodyOutcome(error, format: format, payloadBytes: payloadBytes)
        case .truncated: return make(.fallback, .truncated)
        case .connectionReset: return make(.fallback, .connectionReset)
        case .protocolError: return make(.fallback, .protocolError)
        case .tooManyOpenFiles: return make(.fallback, .tooManyOpenFiles)
        case .atsBlocked:
            var outcome = make(
                .fallback, .atsBlocked, error.message.hasSuffix(".") ? error.message : error.message + ".")
            outcome.hint = error.hint
            return outcome
        case .storageFailed: return make(.fallback, .storageFailed, error.message + " (UNError 104).")
        case .cancelled, .engineStopped:
            return make(.expired, .cancelled, "the run was interrupted before it finished.")
        case .invalidHostMapping, .transferFailed: return make(.fallback, .transferFailed)
        }
    }
}
