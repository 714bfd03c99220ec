import Foundation
import POSIXKit

/// The pipeline's stages after the envelope, the same for every SDK (``Dialect``): the SDK's reading
/// of its keys, invocation, policy per URL, the download, the SDK's naming and its own checks, then
/// Apple's rules in one judge (``judge(_:result:format:naming:sniff:context:)``), and the store.
extension ServiceExtension {
    /// What a dialect reads from a payload: its media items, each admitted (or not) by the policy.
    struct MediaPlan: Sendable {
        let dialect: Dialect
        let items: [PlannedItem]
    }

    struct PlannedItem: Sendable {
        var item: MediaItem
        let admission: Admission
        let warnings: [Warning]
        /// The format the payload's declared type names, when the SDK's file name is that type
        /// (Braze, Klaviyo): its class's cap applies during the download.
        let format: AttachmentFormat?
    }

    /// Reads `bytes` as far as it can without a download (see ``PreparedPayload``): the envelope, then
    /// the SDK's reading (`--sdk`, or the payload's own with `--sdk auto`, Braze without `--sdk`).
    package func prepare(_ bytes: [UInt8]) -> PreparedPayload {
        let reportsSDK = policy.dialect != nil
        switch PayloadInspector.envelope(bytes, pushType: policy.pushType) {
        case .decided(let outcome, let root):
            var dialect = Dialect.braze
            if case .fixed(let fixed)? = policy.dialect { dialect = fixed }
            return PreparedPayload(
                bytes: bytes, stage: .decided(outcome, root: root), dialect: dialect, reportsSDK: reportsSDK)
        case .payload(let root, let size, let warnings):
            let dialect: Dialect
            switch policy.dialect {
            case .fixed(let fixed)?: dialect = fixed
            case .auto?: dialect = DialectDetection.detect(root)
            case nil: dialect = .braze
            }
            let inspection = PayloadInspector.prepending(
                warnings, to: PayloadInspector.read(root, size: size, pushType: policy.pushType, dialect: dialect))
            let stage: PreparedPayload.Stage
            switch inspection {
            case .decided(let outcome, let root):
                stage = .decided(outcome, root: root)
            case .media(let items, let root, let warnings):
                stage = plan(items, warnings: warnings, root: root, dialect: dialect, size: size)
            }
            return PreparedPayload(bytes: bytes, stage: stage, dialect: dialect, reportsSDK: reportsSDK)
        }
    }

    /// Stage 4 for each item the SDK takes: the policy's verdict on its URL, or what to fetch it with.
    private func plan(_ items: [MediaItem], warnings: [Warning], root: JSONValue, dialect: Dialect, size: Int)
        -> PreparedPayload.Stage
    {
        var items = items
        var warnings = warnings
        // Airship's reader drops an entry its own URL(string:) cannot read; on a phone that runs the
        // RFC 1738/1808 parser that is more of them than the reader (RFC 3986) saw.
        if dialect.media.kind == .airship, policy.device.urlParser == .rfc1738 {
            let unreadable = items.filter { AttachmentURL.legacyRefusal(of: $0.url) != nil }
            if !unreadable.isEmpty {
                items.removeAll { AttachmentURL.legacyRefusal(of: $0.url) != nil }
                warnings.append(
                    Warning(
                        "media-entry-dropped",
                        "Airship drops "
                            + unreadable.map { "'\($0.url.escapingControlCharacters)'" }.joined(separator: ", ")
                            + ": URL(string:) on this phone (the RFC 1738/1808 parser) cannot read it; the other "
                            + "entries are attached."))
            }
        }
        guard !items.isEmpty else {
            // Airship: a valid media payload whose URLs are all dropped (or none) still applies its text.
            var outcome = Outcome(
                verdict: .noAttachment, reason: .noAttachmentRequested,
                message: "\(dialect.title)'s media payload is valid but holds no URL it can read: no attachment"
                    + (dialect.textOverrides != nil ? ", and its text is applied." : "."),
                payloadBytes: size)
            outcome.warnings = warnings
            return .decided(outcome, root: root)
        }
        let taken = dialect.attachments.allowsSeveral ? items : Array(items.prefix(1))
        let widest = policy.maxBytes(for: .movie)
        let planned = taken.enumerated().map { index, item -> PlannedItem in
            let format = dialect.declaredFormat(of: item)
            let reading = AttachmentURL(item.url, key: dialect.urlKey, parser: policy.device.urlParser)
            var admission = admit(
                reading, format: format ?? Self.placeholderFormat, payloadBytes: size, cap: format == nil ? widest : nil
            )
            if case .fetch(let url, var fetchPolicy, let cap) = admission {
                fetchPolicy.readsContentDisposition = dialect.naming.readsContentDisposition
                admission = .fetch(url: url, policy: fetchPolicy, cap: cap)
            }
            var itemWarnings = index == 0 ? warnings : []
            if case .fetch = admission { itemWarnings += reading.warnings }
            return PlannedItem(item: item, admission: admission, warnings: itemWarnings, format: format)
        }
        return .media(MediaPlan(dialect: dialect, items: planned), root: root)
    }

    /// The format a download is fetched under before its name is known: the widest class.
    static let placeholderFormat = AttachmentFormat.forExtension("mp4") ?? AttachmentFormat.all[0]

    /// A download an all-or-nothing SDK (Airship) has judged but not yet stored: kept until every
    /// item is known, then stored or discarded together.
    struct HeldFile: @unchecked Sendable {
        let temporary: TemporaryFile
        let suffix: String
        let known: (sha256: String, bytes: Int64)?
    }

    /// Stages 5 to 7 for every item, in the dialect's order, within the one deadline.
    ///
    /// The synchronous work before and after each `await` here and in the item's run lives in
    /// functions of its own (`@inline(never)`): an async function's frame holds every value its
    /// inlined code keeps, for as long as the task runs, and a bench slot is one task for the whole
    /// run (at 1,000 in flight these frames were a third of the peak memory).
    func attach(_ plan: MediaPlan, deadline: ContinuousClock.Instant, payloadBytes: Int) async -> Outcome {
        if plan.dialect.attachments == .concurrentAllOrNothing {
            return await attachAllOrNothing(plan, deadline: deadline, payloadBytes: payloadBytes)
        }
        // OneSignal downloads one after another; the others take one item.
        var results: [(PlannedItem, Outcome)] = []
        for planned in plan.items {
            let (outcome, _) = await attach(
                planned, dialect: plan.dialect, deadline: deadline, payloadBytes: payloadBytes, holds: false)
            results.append((planned, outcome))
        }
        return Self.combine(results, dialect: plan.dialect, payloadBytes: payloadBytes)
    }

    /// Airship's items: downloaded at once, stored only when every one is shown.
    private func attachAllOrNothing(_ plan: MediaPlan, deadline: ContinuousClock.Instant, payloadBytes: Int) async
        -> Outcome
    {
        let dialect = plan.dialect
        let done = await withTaskGroup(of: (Int, Outcome, HeldFile?).self) { group in
            for (index, planned) in plan.items.enumerated() {
                group.addTask {
                    let (outcome, held) = await self.attach(
                        planned, dialect: dialect, deadline: deadline, payloadBytes: payloadBytes, holds: true)
                    return (index, outcome, held)
                }
            }
            // Airship appends in completion order (`for try await result in group`).
            var done: [(Int, Outcome, HeldFile?)] = []
            for await result in group { done.append(result) }
            return done
        }
        return keepAllOrNothing(done, plan: plan, payloadBytes: payloadBytes)
    }

    /// Stores every held file when all items are shown, or discards them all.
    @inline(never)
    private func keepAllOrNothing(_ done: [(Int, Outcome, HeldFile?)], plan: MediaPlan, payloadBytes: Int) -> Outcome {
        let allShown = done.allSatisfy { $0.1.verdict == .attached }
        var results: [(PlannedItem, Outcome)] = []
        for (index, outcome, held) in done {
            var outcome = outcome
            if let held {
                if allShown { outcome = store(held, into: outcome) } else { held.temporary.discard() }
            }
            results.append((plan.items[index], outcome))
        }
        return Self.combine(results, dialect: plan.dialect, payloadBytes: payloadBytes)
    }

    /// Stores a held download under its name, once its SDK keeps it.
    @inline(never)
    private func store(_ held: HeldFile, into outcome: Outcome) -> Outcome {
        var outcome = outcome
        defer { held.temporary.discard() }
        guard let store else { return outcome }
        do {
            let stored = try store.commit(held.temporary, fileExtension: held.suffix, known: held.known)
            outcome.attachment?.file = stored.path
            outcome.attachment?.sha256 = stored.sha256
        } catch {
            outcome.verdict = .fallback
            outcome.reason = .storageFailed
            outcome.message = "\(error.message) (UNError 104)."
            outcome.attachment = nil
        }
        return outcome
    }

    /// One item: the policy's verdict, or the download and the SDK's naming and Apple's rules.
    private func attach(
        _ planned: PlannedItem, dialect: Dialect, deadline: ContinuousClock.Instant, payloadBytes: Int, holds: Bool
    ) async -> (Outcome, HeldFile?) {
        switch planned.admission {
        case .decided(let decided):
            return (Self.finishItem(decided, planned: planned), nil)
        case .fetch(let url, let fetchPolicy, let cap):
            let (request, sdkTimeout) = Self.itemRequest(
                url: url, policy: fetchPolicy, dialect: dialect, deadline: deadline)
            let exhaustion = DescriptorExhaustion.generation
            let (outcome, held) = await fetchAndName(
                request, planned: planned, dialect: dialect, cap: cap, deadline: deadline, payloadBytes: payloadBytes,
                holds: holds)
            return (
                Self.finishItem(
                    outcome, planned: planned, dialect: dialect, exhaustion: exhaustion, sdkTimeout: sdkTimeout,
                    deadline: deadline), held
            )
        }
    }

    /// The item's request: its deadline is the SDK's own resource timeout when that ends first
    /// (then true).
    @inline(never)
    private static func itemRequest(
        url: String, policy: FetchPolicy, dialect: Dialect, deadline: ContinuousClock.Instant
    ) -> (FetchRequest, Bool) {
        if let timeout = dialect.resourceTimeout, ContinuousClock.now + timeout < deadline {
            return (FetchRequest(url: url, deadline: ContinuousClock.now + timeout, policy: policy), true)
        }
        return (FetchRequest(url: url, deadline: deadline, policy: policy), false)
    }

    /// A downloaded item's outcome: the client's blame for descriptors, the SDK's own timeout, then
    /// what every item's outcome carries.
    @inline(never)
    private static func finishItem(
        _ outcome: Outcome, planned: PlannedItem, dialect: Dialect, exhaustion: Int, sdkTimeout: Bool,
        deadline: ContinuousClock.Instant
    ) -> Outcome {
        var outcome = blamingDescriptorExhaustion(outcome, since: exhaustion)
        if sdkTimeout && outcome.reason == .deadlineExceeded && ContinuousClock.now < deadline {
            outcome.verdict = .fallback
            outcome.message =
                "\(dialect.title)'s download session gives up after "
                + "\(String(format: "%g", (dialect.resourceTimeout ?? .zero).inSeconds)) s "
                + "(timeoutIntervalForResource), before the extension's budget: the notification shows without the image."
            outcome.hint = nil
        }
        return finishItem(outcome, planned: planned)
    }

    /// What every item's outcome carries: its URL, declared type and the planner's warnings.
    @inline(never)
    private static func finishItem(_ outcome: Outcome, planned: PlannedItem) -> Outcome {
        var outcome = outcome
        outcome.url = planned.item.url
        outcome.declaredType = planned.item.declared
        outcome.warnings = planned.warnings + outcome.warnings
        return outcome
    }

    /// The download, the SDK's name and Apple's verdict; with `holds`, an attached file is kept
    /// unstored and returned, for its SDK to store or drop with the others.
    private func fetchAndName(
        _ request: FetchRequest, planned: PlannedItem, dialect: Dialect, cap: Int64, deadline: ContinuousClock.Instant,
        payloadBytes: Int, holds: Bool
    ) async -> (Outcome, HeldFile?) {
        let context = JudgeContext(
            item: planned.item, dialect: dialect, deadline: deadline, payloadBytes: payloadBytes, status: nil)
        sniffs.warmUp(sniffer)
        switch await download(request) {
        case .success(let (temporary, result)):
            guard let temporary else { return (name(nil, result: result, context: context), nil) }
            // Writing blocks: it runs off the cooperative pool.
            return await Offload.run {
                let outcome = self.name(holds ? nil : temporary, result: result, context: context)
                guard holds, outcome.verdict == .attached, let attachment = outcome.attachment else {
                    temporary.discard()
                    return (outcome, nil)
                }
                let known = result.body.sha256.map { (sha256: $0, bytes: result.bytes) }
                return (outcome, HeldFile(temporary: temporary, suffix: attachment.type, known: known))
            }
        case .failure(let error):
            return (failed(error, planned: planned, context: context, cap: cap), nil)
        }
    }

    /// A download that failed: an HTTP error's body is named and judged like any other (no SDK
    /// checks the status); any other failure is the failure table's verdict in this payload's words.
    @inline(never)
    private func failed(_ error: FetchError, planned: PlannedItem, context: JudgeContext, cap: Int64) -> Outcome {
        if error.code.kind == .httpStatus, let details = error.details {
            // No SDK checks the status (a download task does not fail on one): the error body is
            // saved, named and handed to iOS like any other; richpush does not store it.
            var statusContext = context
            statusContext.status = details.httpStatus
            statusContext.statusText = error.message
            return name(nil, result: details, context: statusContext)
        }
        let format = planned.format ?? Self.placeholderFormat
        var outcome = failure(error, cap: cap, format: format, payloadBytes: context.payloadBytes)
        outcome.download = error.details.map(Outcome.Download.init)
        outcome.trace = error.details?.trace?.rendered
        if outcome.verdict == .fallback && context.dialect != .braze {
            outcome.message = "\(context.dialect.title)'s download failed: " + outcome.message
        }
        return outcome
    }

    /// A short stand-in for the random or temporary part of an SDK's file name, stable for a URL.
    static func standIn(for url: String) -> String {
        var hash: UInt32 = 2_166_136_261
        for byte in url.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        // Six lowercase hex digits, as "%06x" writes them (String(format:) costs more than the hash).
        let digits = Array("0123456789abcdef".utf8)
        return String(
            decoding: (0..<6).reversed().map { digits[Int((hash >> (4 * UInt32($0))) & 0xF)] }, as: UTF8.self)
    }

    /// What the judge needs besides the download.
    struct JudgeContext {
        let item: MediaItem
        let dialect: Dialect
        let deadline: ContinuousClock.Instant
        let payloadBytes: Int
        /// The HTTP status of an error body the SDK saved anyway; nil for a 2xx.
        var status: Int?
        /// What the download said of that status (a 3xx URLSession does not follow, say).
        var statusText: String? = nil
    }

    /// Stage 6, the SDK's part: it names the file and applies its own checks (a Content-Length limit,
    /// an allow-list, a name iOS cannot type), then hands the file to Apple's rules.
    @inline(never)
    private func name(_ temporary: TemporaryFile?, result: FetchResult, context: JudgeContext) -> Outcome {
        let dialect = context.dialect
        var outcome: Outcome
        var sniffResult: Sniff?
        var naming: Naming?
        do {
            let sniff = try sniffs.sniff(body: result.body, with: sniffer)
            sniffResult = sniff
            let named = names.name(
                NamingInput(
                    url: context.item.url, responseURL: result.effectiveURL, contentType: result.contentType,
                    contentDisposition: result.contentDisposition, declared: context.item.declared,
                    head: dialect.naming.readsHead ? result.body.head : []),
                stand: Self.standIn(for: context.item.url + (context.item.id ?? "")), dialect: dialect)
            naming = named
            let said = "\(dialect.title) named it '\(named.name ?? "")' from \(named.from)"
            if let limit = dialect.maxContentLength, let length = result.contentLength, length > limit {
                outcome = context.finish(
                    .fallback, .fileTooLarge,
                    "\(dialect.title) skips a download whose Content-Length (\(length)) is over its \(limit)-byte limit."
                )
            } else if let skipped = named.skipped, named.typeHint == nil {
                outcome = context.finish(.fallback, .unsupportedType, "\(dialect.title): \(skipped) (UNError 101).")
            } else if let suffix = named.fileExtension, named.typeHint == nil, !dialect.accepts(suffix) {
                outcome = context.finish(
                    .fallback, .unsupportedType,
                    "\(said); '.\(suffix)' is not on \(dialect.title)'s list "
                        + "(\((dialect.allowList ?? []).joined(separator: ", "))), so it attaches nothing.")
            } else if let format = named.iosFormat {
                outcome = judge(
                    temporary, result: result, format: format, naming: named, sniff: sniff, context: context)
                outcome.message = said + "; " + outcome.message
            } else {
                let suffix = named.fileExtension.map { "'.\($0)'" } ?? "no extension"
                outcome = context.finish(
                    .fallback, .unsupportedType,
                    "\(said); iOS has no attachment type for \(suffix) (UNError 101): the plain notification shows.")
            }
        } catch {
            outcome = context.finish(
                .fallback, .storageFailed, "cannot sniff the download: \(error.message) (UNError 104).")
        }
        if let status = context.status {
            let what = naming?.iosFormat?.attachmentClass.rawValue ?? "image"
            outcome.message =
                (context.statusText ?? "the server answered HTTP \(status)")
                + ". A download task does not fail on an HTTP status: "
                + "\(dialect.title)'s extension saves the \(result.bytes)-byte response body and hands it to iOS: "
                + outcome.message
                + (outcome.verdict == .attached
                    ? " So the phone shows the server's error \(what) instead of the asset (richpush does not store it)."
                    : " So the phone shows the plain notification.")
            if outcome.verdict != .attached { outcome.reason = .httpStatus }
        }
        outcome.sdkFile = naming
        outcome.sniff = sniffResult
        outcome.download = Outcome.Download(result)
        outcome.trace = result.trace?.rendered
        return outcome
    }

    /// Stage 7, Apple's rules, the one place they are written: the class cap, the bytes against the
    /// type iOS reads from the file's name, the deadline, then the store (an error body is judged
    /// and never stored).
    private func judge(
        _ temporary: TemporaryFile?, result: FetchResult, format: AttachmentFormat, naming: Naming, sniff: Sniff,
        context: JudgeContext
    ) -> Outcome {
        let dialect = context.dialect
        let how =
            naming.fileExtension.flatMap(AttachmentFormat.forExtension) != nil ? "" : " by its type hint (inferred)"
        let cap = policy.maxBytes(for: format.attachmentClass)
        guard result.bytes <= cap else {
            return context.finish(
                .fallback, .fileTooLarge, AttachmentValidator.tooLargeMessage(format.attachmentClass, cap: cap) + ".")
        }
        var warnings: [Warning] = []
        if let header = result.contentType, let sniffed = sniff.format, AttachmentFormat.forMIME(header) != sniffed,
            naming.rule != "content-type", naming.typeHint == nil
        {
            warnings.append(
                Warning(
                    "content-type-mismatch",
                    "the server sends Content-Type '\(header)' for \(sniffed.name) bytes; \(dialect.title) names the "
                        + "file from \(naming.from) and iOS reads the bytes, but other SDKs and caches rely on it."))
        }
        if dialect.advisesImageSize && format.attachmentClass == .image && result.bytes > policy.brazeImageAdvisoryBytes
        {
            warnings.append(
                Warning(
                    "image-over-braze-advice",
                    "the image is \(result.bytes) bytes; Braze advises at most 5 MB (about 500 KB recommended)."))
        }
        switch AttachmentValidator.validate(declared: format, sniff: sniff, typeSource: dialect.typeSource) {
        case .reject(let reason, let message):
            var outcome = context.finish(
                .fallback, reason, "iOS opens it as \(format.uti)\(how) and refuses it: " + message)
            outcome.warnings = warnings
            return outcome
        case .attach(let more):
            warnings += more
            guard ContinuousClock.now < context.deadline else {
                return context.finish(
                    .expired, .deadlineExceeded, "the budget ran out before the attachment was stored.")
            }
            let suffix = AttachmentFormat.normalizedExtension(naming.fileExtension ?? format.extensions[0])
            var outcome = context.finish(
                .attached, .ok, "the \(format.attachmentClass.rawValue) would show (\(format.uti))\(how).")
            if let status = context.status {
                warnings.append(
                    Warning(
                        "error-body-attached",
                        "HTTP \(status): the error response is itself a \(format.attachmentClass.rawValue), which the "
                            + "phone shows in place of the asset; fix the URL or the object behind it."))
            }
            outcome.warnings = warnings
            guard let store, let temporary, context.status == nil else {
                outcome.attachment = Outcome.Attachment(
                    file: nil, uti: format.uti, bytes: result.bytes, sha256: nil, type: suffix,
                    attachmentClass: format.attachmentClass)
                return outcome
            }
            do {
                let stored = try store.commit(
                    temporary, fileExtension: suffix,
                    known: result.body.sha256.map { (sha256: $0, bytes: result.bytes) })
                outcome.attachment = Outcome.Attachment(
                    file: stored.path, uti: format.uti, bytes: stored.bytes, sha256: stored.sha256, type: suffix,
                    attachmentClass: format.attachmentClass)
            } catch {
                return context.finish(.fallback, .storageFailed, "\(error.message) (UNError 104).")
            }
            return outcome
        }
    }

    /// One outcome from the items' outcomes, by the dialect's rule for several attachments.
    @inline(never)
    static func combine(_ results: [(PlannedItem, Outcome)], dialect: Dialect, payloadBytes: Int) -> Outcome {
        guard dialect.attachments.allowsSeveral else {
            return results.first?.1
                ?? Outcome(
                    verdict: .noAttachment, reason: .noAttachmentRequested, message: "no media",
                    payloadBytes: payloadBytes)
        }
        let items = results.map { Outcome.Item(id: $0.0.item.id, url: $0.0.item.url, outcome: $0.1) }
        let shown = results.filter { $0.1.verdict == .attached }
        let failed = results.filter { $0.1.verdict != .attached }
        let order =
            dialect.attachments == .sequentialUnordered
            ? "OneSignal walks an NSDictionary, so the order (and the thumbnail) is undefined; richpush shows payload order"
            : "Airship adds them in completion order"
        var outcome: Outcome
        if dialect.attachments == .concurrentAllOrNothing, let bad = failed.first {
            outcome = bad.1
            outcome.verdict = failed.contains { $0.1.verdict == .expired } ? .expired : .fallback
            outcome.attachment = nil
            outcome.message =
                "\(failed.count) of \(results.count) downloads failed, and Airship drops every attachment (and its "
                + "title/body overrides) when one fails: \(bad.1.message)"
        } else if let first = shown.first {
            outcome = first.1
            outcome.message =
                "\(dialect.title) attached \(shown.count) of \(results.count) (\(order)); the first is the thumbnail: "
                + first.1.message
        } else if let first = results.first {
            outcome = first.1
            outcome.verdict = failed.contains { $0.1.verdict == .expired } ? .expired : first.1.verdict
            if results.count > 1 {
                outcome.message = "none of the \(results.count) attachments would show; the first: " + first.1.message
            }
        } else {
            outcome = Outcome(
                verdict: .noAttachment, reason: .noAttachmentRequested, message: "no media", payloadBytes: payloadBytes)
        }
        outcome.warnings = results.flatMap { $0.1.warnings }
        outcome.attachments = items
        return outcome
    }

    /// The outcome with the dialect's name, what the user sees, and the inferred rules it rests on.
    @inline(never)
    static func finish(_ outcome: Outcome, dialect: Dialect, root: JSONValue?) -> Outcome {
        var outcome = outcome
        outcome.sdk = dialect.name
        let attached =
            outcome.verdict == .attached ? (outcome.attachments?.filter { $0.verdict == .attached }.count ?? 1) : 0
        outcome.delivered = dialect.delivered(outcome.verdict, attached: attached, root: root, reason: outcome.reason)
        if !dialect.inferred.isEmpty { outcome.inferred = dialect.inferred }
        return outcome
    }
}

extension ServiceExtension.JudgeContext {
    func finish(_ verdict: Verdict, _ reason: ReasonCode, _ message: String) -> Outcome {
        Outcome(verdict: verdict, reason: reason, message: message, payloadBytes: payloadBytes)
    }
}

extension Dialect {
    /// The format the payload's declared type names, when the SDK names the file by it.
    func declaredFormat(of item: MediaItem) -> AttachmentFormat? {
        switch naming {
        case .declaredType, .declaredTypeAsWritten: return item.declared.flatMap(AttachmentFormat.forExtension)
        default: return nil
        }
    }

    /// What a validator's advice names as the type's source: the declared-type key, or the file's name.
    var typeSource: AttachmentValidator.TypeSource {
        switch naming {
        case .declaredType, .declaredTypeAsWritten:
            return media.typePath.map { .key(Self.dotted($0)) } ?? .fileName
        default: return .fileName
        }
    }
}

extension NamingRule {
    /// Whether the rule reads `URLResponse.suggestedFilename`, which reads Content-Disposition.
    var readsContentDisposition: Bool {
        if case .suggestedFilename = self { return true }
        return false
    }

    /// Whether the rule reads the body's first bytes (Airship's byte table).
    var readsHead: Bool {
        if case .pathSuffixThenHint = self { return true }
        return false
    }
}
