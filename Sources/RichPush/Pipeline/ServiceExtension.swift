import Foundation
import POSIXKit

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
/// Stages: read (APNs rules), invocation (`mutable-content`, alert), the SDK's reading of its media
/// keys (``Dialect``: Braze's `ab.att` by default), policy (ATS, budget, caps), fetch, the SDK's naming,
/// Apple's rules (one judge for every SDK), store, emit. The budget is one deadline from the
/// moment ``process(_:)`` starts, as on the device. Safe to call from many tasks at once.
///
/// ```swift
/// let service = ServiceExtension(engine: engine, store: try AttachmentStore(folder: "out"))
/// let result = await service.process(Array(payloadData))
/// print(result.outcome.verdict)
/// ```
package struct ServiceExtension: Sendable {
    package let engine: FetchEngine
    package let sniffer: TypeSniffer
    /// Where attachments are kept; `nil` keeps none (a bench without an output folder): the body is sniffed and
    /// hashed as it arrives and then dropped, and the verdict is the same.
    package let store: AttachmentStore?
    package private(set) var policy: ExtensionPolicy
    /// When set, each URL is downloaded once and shared by every payload that names it.
    package let sharedDownloads: SharedDownloads?
    /// When set (delivery tracking is on), each payload's delivery event is recorded for `/users/track`.
    package let tracker: DeliveryTracker?
    /// Whether ``ProcessResult/mutatedPayload`` is written; a bench, which reads only the outcome,
    /// turns it off (about a tenth of a bench device's CPU).
    package var emitsPayload = true
    /// What the sniffer said of each input it read (a download's kept head and media facts) for this
    /// extension: a campaign sends every device the same asset, and the same input always sniffs the same.
    /// Shared by the copies ``over(_:)`` makes.
    let sniffs = SniffCache()
    /// The names the SDK gave each input it read, for the same reason (``NamingCache``).
    let names = NamingCache()

    package init(
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
    package func over(_ network: NetworkProfile?) -> ServiceExtension {
        var copy = self
        copy.policy.fetch.network = network
        return copy
    }

    /// This extension on another phone (``DeviceVersion``): its URL parser, and the CFNetwork and Darwin
    /// versions in a User-Agent that names richpush's (one the user set otherwise is kept).
    package func on(_ device: DeviceVersion) -> ServiceExtension {
        var copy = self
        copy.policy.device = device
        copy.policy.fetch.userAgent = DeviceUserAgent.retargeting(policy.fetch.userAgent, to: device.ios)
        return copy
    }

    /// This extension for pushes of another `apns-push-type` (a composed request's), everything else the same.
    package func pushing(_ pushType: ExtensionPolicy.PushType) -> ServiceExtension {
        var copy = self
        copy.policy.pushType = pushType
        return copy
    }

    package func process(_ bytes: [UInt8]) async -> ProcessResult {
        await process(bytes, arrivedAt: .now)
    }

    /// Processes a payload that reached the device at `arrival`: the budget (and the elapsed time
    /// reported) counts from then, even if the run started later (the burst benchmark's open loop).
    package func process(_ bytes: [UInt8], arrivedAt arrival: ContinuousClock.Instant) async -> ProcessResult {
        await process(prepare(bytes), arrivedAt: arrival)
    }

    /// A payload read once for many deliveries: stages 1 to 4 (APNs rules, invocation, the SDK's
    /// reading, policy) depend on the bytes and the policy only, so a bench reads its payload and
    /// decides its URLs once per run, and each device starts at the download, the part a phone
    /// really does on its own. ``process(_:arrivedAt:)`` of the same bytes gives the same result.
    package struct PreparedPayload: Sendable {
        let bytes: [UInt8]
        let stage: Stage
        /// The SDK whose extension reads it (`--sdk`, detected with `--sdk auto`, Braze by default).
        let dialect: Dialect
        /// Whether outcomes name the SDK and what it delivers: the run was given `--sdk`.
        let reportsSDK: Bool

        enum Stage: Sendable {
            /// Decided before any download: the outcome (its elapsed time is set per delivery).
            case decided(Outcome, root: JSONValue?)
            /// The SDK's media items, each with what the policy says of its URL.
            case media(MediaPlan, root: JSONValue)
        }

        /// The same payload asking for `url`: a bench template's expansion for one device, which
        /// differs from the URL the policy judged only in digits and letters of its path or query, so
        /// the judgement holds (the payload's bytes still name the judged URL; a bench emits none).
        package func retargeted(to url: String) -> PreparedPayload {
            guard case .media(let plan, let root) = stage, plan.items.count == 1, let planned = plan.items.first else {
                return self
            }
            var admission = planned.admission
            if case .fetch(_, let policy, let cap) = admission {
                admission = .fetch(url: url, policy: policy, cap: cap)
            }
            var item = planned.item
            item.url = url
            let moved = PlannedItem(
                item: item, admission: admission, warnings: planned.warnings, format: planned.format)
            return PreparedPayload(
                bytes: bytes, stage: .media(MediaPlan(dialect: plan.dialect, items: [moved]), root: root),
                dialect: dialect, reportsSDK: reportsSDK)
        }
    }

    /// What the policy says of an attachment's URL before anything is fetched.
    enum Admission: Sendable {
        case decided(Outcome)
        /// Fetch `url` (as `URL(string:)` reads it, see ``AttachmentURL``) under `policy`, whose `maxBytes` is the class cap `cap`.
        case fetch(url: String, policy: FetchPolicy, cap: Int64)
    }

    /// Delivers a prepared payload that reached the device at `arrival` (see ``process(_:arrivedAt:)``).
    package func process(_ prepared: PreparedPayload, arrivedAt arrival: ContinuousClock.Instant) async
        -> ProcessResult
    {
        if prepared.reportsSDK, !prepared.dialect.networkCalls.isEmpty {
            return await processWithCalls(prepared, dialect: prepared.dialect, arrivedAt: arrival)
        }
        var (outcome, root) = await run(prepared, deadline: arrival + policy.budget)
        if prepared.reportsSDK {
            outcome = Self.finish(outcome, dialect: prepared.dialect, root: root)
        } else {
            // Without --sdk the outcome keeps the shape it has always had: no SDK fields.
            outcome.sdkFile = nil
        }
        return emit(outcome, root: root, bytes: prepared.bytes, started: arrival)
    }

    /// The last stage: the elapsed time, the delivery event, the content extension, the mutated payload.
    @inline(never)
    func emit(
        _ outcome: Outcome, root: JSONValue?, bytes: [UInt8], started: ContinuousClock.Instant,
        displayedAt: ContinuousClock.Instant? = nil
    ) -> ProcessResult {
        // A URL's user name and password never reach what richpush prints or stores.
        var outcome = outcome.strippingURLCredentials()
        // To 0.01 ms, what a wall time means here (the JSON then reads 52.31, not 52.309871).
        outcome.elapsedMilliseconds = Rounding.milliseconds(((displayedAt ?? .now) - started).inMilliseconds)
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

    func run(_ prepared: PreparedPayload, deadline: ContinuousClock.Instant) async -> (Outcome, JSONValue?) {
        switch prepared.stage {
        case .decided(let outcome, let root):
            return (outcome, root)
        case .media(let plan, let root):
            return (await attach(plan, deadline: deadline, payloadBytes: prepared.bytes.count), root)
        }
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

    /// Stage 4, policy (App Transport Security and the class cap): the outcome when the URL cannot be
    /// fetched, or the URL and policy to fetch it with.
    @inline(never)
    func admit(_ reading: AttachmentURL, format: AttachmentFormat, payloadBytes: Int, cap: Int64? = nil)
        -> Admission
    {
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
            return finish(.fallback, .invalidURL, "'\(reading.key)' ('\(url)') is not an absolute URL (UNError 100).")
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
        let cap = cap ?? policy.maxBytes(for: format.attachmentClass)
        fetchPolicy.maxBytes = cap
        // The sniffer's bytes and the SHA-256 are kept as the body arrives: nothing is read back.
        fetchPolicy.keepsBodySummary = true
        // The hash names the stored file; with no store (a bench without an output folder) it is not computed.
        fetchPolicy.hashesBody = store != nil
        return .fetch(url: requested, policy: fetchPolicy, cap: cap)
    }

    /// Downloads into a new temporary file, or links the run's shared download of the URL.
    @inline(never)
    func download(_ request: FetchRequest) async -> Result<(TemporaryFile?, FetchResult), FetchError> {
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
    func networkHint(_ details: FetchResult?, format: AttachmentFormat) -> String? {
        guard let profile = policy.fetch.network else { return nil }
        let secure = details.map { !$0.effectiveURL.lowercased().hasPrefix("http:") } ?? true
        guard let bytes = details?.contentLength, bytes > 0 else {
            return TransferEstimate.hint(profile: profile, budget: policy.budget, secure: secure)
        }
        return TransferEstimate(profile: profile, bytes: bytes, secure: secure)
            .hint(budget: policy.budget, kind: format.name.uppercased())
    }

    @inline(never)
    func failure(_ error: FetchError, cap: Int64, format: AttachmentFormat, payloadBytes: Int) -> Outcome {
        // The verdict and reason are the failure table's (FailureFacts); what is said is this payload's.
        let facts = error.code.kind.facts
        var outcome = Outcome(
            verdict: facts.verdict, reason: facts.reason, message: error.message + ".", payloadBytes: payloadBytes)
        switch error.code.kind {
        case .deadlineExceeded:
            let budget = String(format: "%g", policy.budget.inSeconds)
            let received = error.details.map { " (\($0.bytes) bytes had arrived)" } ?? ""
            outcome.message =
                "\(error.details?.effectiveURL ?? "the asset") did not finish within the extension's \(budget) s budget"
                + "\(received): iOS would call serviceExtensionTimeWillExpire and show the plain notification."
            outcome.hint = networkHint(error.details, format: format)
        case .tooLarge:
            outcome.message =
                AttachmentValidator.tooLargeMessage(format.attachmentClass, cap: cap)
                + "; the download was stopped early."
        case .redirectNotAllowed:
            if !policy.fetch.allowHTTP && error.redirectTarget?.lowercased().hasPrefix("http:") == true {
                outcome.reason = .atsBlocked
                outcome.message = error.message + ": App Transport Security blocks the redirect to http."
            }
        case .tlsFailed:
            outcome.hint = error.hint
            outcome.tlsProblem = error.tlsProblem
        case .atsBlocked:
            outcome.message = error.message.hasSuffix(".") ? error.message : error.message + "."
            outcome.hint = error.hint
        case .storageFailed:
            outcome.message = error.message + " (UNError 104)."
        case .cancelled, .engineStopped:
            outcome.message = "the run was interrupted before it finished."
        // The one judge names and judges an error body like any other (``ServiceExtension/judge``).
        case .httpStatus, .invalidURL, .schemeNotAllowed, .tooManyRedirects, .dnsFailed, .connectFailed,
            .connectTimeout, .stalled, .truncated, .connectionReset, .protocolError, .tooManyOpenFiles,
            .invalidHostMapping, .transferFailed:
            break
        }
        return outcome
    }
}
