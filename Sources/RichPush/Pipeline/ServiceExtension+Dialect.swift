import Foundation

/// The pipeline's stages for an SDK dialect (``Dialect``): the same envelope, invocation, policy,
/// download, sniff, validation and store as Braze's, with the SDK's keys, naming and delivery rules.
extension ServiceExtension {
    /// What a dialect reads from a payload: its media items, each admitted (or not) by the policy.
    struct MediaPlan: Sendable {
        let dialect: Dialect
        let items: [PlannedItem]
    }

    struct PlannedItem: Sendable {
        let item: MediaItem
        let admission: Admission
        let warnings: [Warning]
    }

    /// Stages 1 to 4 under `choice`: Braze's own reader for Braze, the dialect's for the others.
    func prepare(_ bytes: [UInt8], choice: DialectChoice) -> PreparedPayload {
        let dialect: Dialect
        var envelope: PayloadInspector.Envelope?
        switch choice {
        case .fixed(let fixed):
            dialect = fixed
        case .auto:
            let read = PayloadInspector.envelope(bytes, pushType: policy.pushType)
            envelope = read
            if case .payload(let root, _, _) = read {
                dialect = DialectDetection.detect(root)
            } else {
                dialect = .braze
            }
        }
        guard dialect != .braze else {
            var prepared = prepareBraze(bytes)
            prepared.dialect = dialect
            return prepared
        }
        switch envelope ?? PayloadInspector.envelope(bytes, pushType: policy.pushType) {
        case .decided(let inspection):
            guard case .decided(let outcome, let root) = inspection else {
                var prepared = prepareBraze(bytes)
                prepared.dialect = dialect
                return prepared
            }
            return PreparedPayload(bytes: bytes, stage: .decided(outcome, root: root), dialect: dialect)
        case .payload(let root, let size, let warnings):
            var stage = read(root, dialect: dialect, size: size)
            if !warnings.isEmpty {
                switch stage {
                case .decided(var outcome, let root):
                    outcome.warnings = warnings + outcome.warnings
                    stage = .decided(outcome, root: root)
                case .media(let plan, let root):
                    var items = plan.items
                    if !items.isEmpty {
                        items[0] = PlannedItem(
                            item: items[0].item, admission: items[0].admission, warnings: warnings + items[0].warnings)
                    }
                    stage = .media(MediaPlan(dialect: dialect, items: items), root: root)
                case .attachment: break
                }
            }
            return PreparedPayload(bytes: bytes, stage: stage, dialect: dialect)
        }
    }

    /// Stages 2 to 4 for a dialect: its media keys, whether iOS runs the extension, the policy per URL.
    private func read(_ root: JSONValue, dialect: Dialect, size: Int) -> PreparedPayload.Stage {
        func decided(_ verdict: Verdict, _ reason: ReasonCode, _ message: String) -> PreparedPayload.Stage {
            .decided(Outcome(verdict: verdict, reason: reason, message: message, payloadBytes: size), root: root)
        }
        let reading = dialect.readMedia(root)
        if case .none(let why) = reading {
            return decided(
                .noAttachment, .noAttachmentRequested,
                "the payload asks \(dialect.title)'s extension for no attachment: \(why).")
        }
        if let notRun = PayloadInspector.invocation(
            aps: root["aps"] ?? .object([]), root: root, size: size, pushType: policy.pushType)
        {
            return .decided(notRun, root: root)
        }
        switch reading {
        case .none(let why):
            return decided(.noAttachment, .noAttachmentRequested, why)
        case .refused(let reason, let message):
            return decided(.fallback, reason, message)
        case .items(let items):
            let taken =
                dialect.attachments == .single || dialect.attachments == .firstOnly ? Array(items.prefix(1)) : items
            let widest = policy.maxBytes(for: .movie)
            let planned = taken.map { item -> PlannedItem in
                let reading = AttachmentURL(item.url)
                var admission = admit(reading, format: Self.placeholderFormat, payloadBytes: size, cap: widest)
                if case .decided(var outcome) = admission {
                    outcome.message = Self.naming(outcome.message, key: dialect.media.keys.first ?? "url")
                    outcome.hint = outcome.hint.map { Self.naming($0, key: dialect.media.keys.first ?? "url") }
                    admission = .decided(outcome)
                }
                if case .fetch(let url, var fetchPolicy, let cap) = admission {
                    fetchPolicy.readsContentDisposition = true
                    admission = .fetch(url: url, policy: fetchPolicy, cap: cap)
                }
                var warnings: [Warning] = []
                if case .fetch = admission { warnings = reading.warnings }
                return PlannedItem(item: item, admission: admission, warnings: warnings)
            }
            return .media(MediaPlan(dialect: dialect, items: planned), root: root)
        }
    }

    /// The format a dialect's download is fetched under before its name is known: the widest class.
    static let placeholderFormat = AttachmentFormat.forExtension("mp4") ?? AttachmentFormat.all[0]

    /// A message written for Braze's `ab.att.url`, naming the dialect's key instead.
    static func naming(_ text: String, key: String) -> String {
        text.replacingOccurrences(of: "'ab.att.url'", with: "'\(key)'")
            .replacingOccurrences(of: "but set 'ab.att.type' to '", with: "but the name should end in '.")
            .replacingOccurrences(of: "Set 'ab.att.type' to '", with: "The name should end in '.")
            .replacingOccurrences(of: "Fix 'ab.att.type' or the URL.", with: "Fix the URL or what the server sends.")
            .replacingOccurrences(of: "'ab.att.type'", with: "the file's name")
    }

    /// A download an all-or-nothing SDK (Airship) has judged but not yet stored: kept until every
    /// item is known, then stored or discarded together.
    struct HeldFile: @unchecked Sendable {
        let temporary: TemporaryFile
        let suffix: String
        let known: (sha256: String, bytes: Int64)?
    }

    /// Stages 5 to 7 for every item, in the dialect's order, within the one deadline.
    func attach(_ plan: MediaPlan, deadline: ContinuousClock.Instant, payloadBytes: Int) async -> Outcome {
        let dialect = plan.dialect
        var results: [(PlannedItem, Outcome)] = []
        if dialect.attachments == .concurrentAllOrNothing {
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
            let allShown = done.allSatisfy { $0.1.verdict == .attached }
            for (index, outcome, held) in done {
                var outcome = outcome
                if let held {
                    if allShown { outcome = store(held, into: outcome) } else { held.temporary.discard() }
                }
                results.append((plan.items[index], outcome))
            }
        } else {
            // OneSignal downloads one after another; the others take one item.
            for planned in plan.items {
                let (outcome, _) = await attach(
                    planned, dialect: dialect, deadline: deadline, payloadBytes: payloadBytes, holds: false)
                results.append((planned, outcome))
            }
        }
        return Self.combine(results, dialect: dialect, payloadBytes: payloadBytes)
    }

    /// Stores a held download under its name, once its SDK keeps it.
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
        var outcome: Outcome
        var held: HeldFile?
        switch planned.admission {
        case .decided(let decided):
            outcome = decided
        case .fetch(let url, let fetchPolicy, let cap):
            var itemDeadline = deadline
            var sdkTimeout = false
            if let timeout = dialect.resourceTimeout, ContinuousClock.now + timeout < deadline {
                itemDeadline = ContinuousClock.now + timeout
                sdkTimeout = true
            }
            let request = FetchRequest(url: url, deadline: itemDeadline, policy: fetchPolicy)
            let exhaustion = DescriptorExhaustion.generation
            (outcome, held) = await fetchAndName(
                request, item: planned.item, dialect: dialect, cap: cap, deadline: deadline, payloadBytes: payloadBytes,
                holds: holds)
            outcome = Self.blamingDescriptorExhaustion(outcome, since: exhaustion)
            if sdkTimeout && outcome.reason == .deadlineExceeded && ContinuousClock.now < deadline {
                outcome.verdict = .fallback
                outcome.message =
                    "\(dialect.title)'s download session gives up after "
                    + "\(String(format: "%g", (dialect.resourceTimeout ?? .zero).inSeconds)) s "
                    + "(timeoutIntervalForResource), before the extension's budget: the notification shows without the image."
                outcome.hint = nil
            }
        }
        outcome.url = planned.item.url
        outcome.declaredType = planned.item.declared
        outcome.warnings = planned.warnings + outcome.warnings
        return (outcome, held)
    }

    /// The download, the SDK's name and Apple's verdict; with `holds`, an attached file is kept
    /// unstored and returned, for its SDK to store or drop with the others.
    private func fetchAndName(
        _ request: FetchRequest, item: MediaItem, dialect: Dialect, cap: Int64, deadline: ContinuousClock.Instant,
        payloadBytes: Int, holds: Bool
    ) async -> (Outcome, HeldFile?) {
        switch await download(request) {
        case .success(let (temporary, result)):
            guard let temporary else {
                return (
                    name(
                        nil, result: result, item: item, dialect: dialect, deadline: deadline,
                        payloadBytes: payloadBytes),
                    nil
                )
            }
            return await Offload.run {
                let outcome = self.name(
                    holds ? nil : temporary, result: result, item: item, dialect: dialect, deadline: deadline,
                    payloadBytes: payloadBytes)
                guard holds, outcome.verdict == .attached, let attachment = outcome.attachment else {
                    temporary.discard()
                    return (outcome, nil)
                }
                let known = result.body.sha256.map { (sha256: $0, bytes: result.bytes) }
                return (outcome, HeldFile(temporary: temporary, suffix: attachment.type, known: known))
            }
        case .failure(let error):
            if error.code.kind == .httpStatus, let details = error.details {
                // No SDK checks the status: the error body is named and handed to iOS like any other.
                var outcome = name(
                    nil, result: details, item: item, dialect: dialect, deadline: deadline, payloadBytes: payloadBytes,
                    status: details.httpStatus)
                outcome.download = Outcome.Download(details)
                return (outcome, nil)
            }
            var outcome = failure(error, cap: cap, format: Self.placeholderFormat, payloadBytes: payloadBytes)
            outcome.download = error.details.map(Outcome.Download.init)
            outcome.trace = error.details?.trace?.rendered
            if outcome.verdict == .fallback {
                outcome.message = "\(dialect.title)'s download failed: " + outcome.message
            }
            return (outcome, nil)
        }
    }

    /// A short stand-in for the random or temporary part of an SDK's file name, stable for a URL.
    static func standIn(for url: String) -> String {
        var hash: UInt32 = 2_166_136_261
        for byte in url.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return String(format: "%06x", hash & 0xFF_FFFF)
    }

    /// Stages 6 and 7 for a dialect: the SDK names the file, then Apple's rules decide (UTI, class cap, bytes).
    private func name(
        _ temporary: TemporaryFile?, result: FetchResult, item: MediaItem, dialect: Dialect,
        deadline: ContinuousClock.Instant, payloadBytes: Int, status: Int? = nil
    ) -> Outcome {
        func finish(_ verdict: Verdict, _ reason: ReasonCode, _ message: String) -> Outcome {
            var outcome = Outcome(verdict: verdict, reason: reason, message: message, payloadBytes: payloadBytes)
            outcome.download = Outcome.Download(result)
            outcome.trace = result.trace?.rendered
            return outcome
        }
        let sniff: Sniff
        do { sniff = try sniffs.sniff(body: result.body, with: sniffer) } catch {
            return finish(.fallback, .storageFailed, "cannot sniff the download: \(error.message) (UNError 104).")
        }
        let naming = dialect.name(
            NamingInput(
                url: item.url, responseURL: result.effectiveURL, contentType: result.contentType,
                contentDisposition: result.contentDisposition, declared: item.declared, sniffed: sniff.format),
            stand: Self.standIn(for: item.url + (item.id ?? "")))
        let statusNote =
            status.map {
                "the server answered HTTP \($0) and \(dialect.title) does not check the status: it saved the "
                    + "\(result.bytes)-byte error body. "
            } ?? ""
        var outcome: Outcome
        let said = "\(dialect.title) named it '\(naming.name ?? "")' from \(naming.from)"
        if let limit = dialect.maxContentLength, let length = result.contentLength, length > limit {
            outcome = finish(
                .fallback, .fileTooLarge,
                "\(dialect.title) skips a download whose Content-Length (\(length)) is over its \(limit)-byte limit.")
        } else if let skipped = naming.skipped, naming.typeHint == nil {
            outcome = finish(.fallback, .unsupportedType, statusNote + "\(dialect.title): \(skipped) (UNError 101).")
        } else if let suffix = naming.fileExtension, naming.typeHint == nil, !dialect.accepts(suffix) {
            outcome = finish(
                .fallback, .unsupportedType,
                statusNote + "\(said); '.\(suffix)' is not on \(dialect.title)'s list "
                    + "(\((dialect.allowList ?? []).joined(separator: ", "))), so it attaches nothing.")
        } else if let format = naming.iosFormat {
            outcome = judgeNamed(
                temporary, result: result, format: format, naming: naming, sniff: sniff, said: said,
                statusNote: statusNote, deadline: deadline, payloadBytes: payloadBytes, status: status)
        } else {
            let suffix = naming.fileExtension.map { "'.\($0)'" } ?? "no extension"
            outcome = finish(
                .fallback, .unsupportedType,
                statusNote
                    + "\(said); iOS has no attachment type for \(suffix) (UNError 101): the plain notification shows.")
        }
        outcome.sdkFile = naming
        outcome.sniff = sniff
        outcome.download = Outcome.Download(result)
        outcome.trace = result.trace?.rendered
        return outcome
    }

    /// Apple's rules over a file the SDK named: the class cap, the bytes against the type, the store.
    private func judgeNamed(
        _ temporary: TemporaryFile?, result: FetchResult, format: AttachmentFormat, naming: Naming, sniff: Sniff,
        said: String, statusNote: String, deadline: ContinuousClock.Instant, payloadBytes: Int, status: Int?
    ) -> Outcome {
        func finish(_ verdict: Verdict, _ reason: ReasonCode, _ message: String) -> Outcome {
            Outcome(verdict: verdict, reason: reason, message: message, payloadBytes: payloadBytes)
        }
        let how =
            naming.fileExtension.flatMap(AttachmentFormat.forExtension) != nil ? "" : " by its type hint (inferred)"
        let cap = policy.maxBytes(for: format.attachmentClass)
        guard result.bytes <= cap else {
            return finish(
                .fallback, .fileTooLarge,
                "\(said); " + AttachmentValidator.tooLargeMessage(format.attachmentClass, cap: cap) + ".")
        }
        switch AttachmentValidator.validate(declared: format, sniff: sniff) {
        case .reject(let reason, let message):
            return finish(
                .fallback, status == nil ? reason : .httpStatus,
                statusNote + "\(said); iOS opens it as \(format.uti)\(how) and refuses it: "
                    + Self.naming(message, key: "url"))
        case .attach(let warnings):
            guard ContinuousClock.now < deadline else {
                return finish(.expired, .deadlineExceeded, "the budget ran out before the attachment was stored.")
            }
            let suffix = AttachmentFormat.normalizedExtension(naming.fileExtension ?? format.extensions[0])
            var outcome = finish(
                .attached, .ok, statusNote + "\(said); iOS attached it as \(format.uti)\(how).")
            outcome.warnings = warnings.map { Warning($0.code, Self.naming($0.message, key: "url")) }
            if let status {
                outcome.warnings.append(
                    Warning(
                        "error-body-attached",
                        "HTTP \(status): the error response is itself a \(format.attachmentClass.rawValue), which the "
                            + "phone shows in place of the asset; fix the URL or the object behind it."))
            }
            guard let store, let temporary, status == nil else {
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
                return finish(.fallback, .storageFailed, "\(error.message) (UNError 104).")
            }
            return outcome
        }
    }

    /// One outcome from the items' outcomes, by the dialect's rule for several attachments.
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
    static func finish(_ outcome: Outcome, dialect: Dialect, root: JSONValue?) -> Outcome {
        var outcome = outcome
        outcome.sdk = dialect.name
        let attached =
            outcome.verdict == .attached ? (outcome.attachments?.filter { $0.verdict == .attached }.count ?? 1) : 0
        outcome.delivered = dialect.delivered(outcome.verdict, attached: attached, root: root)
        if !dialect.inferred.isEmpty { outcome.inferred = dialect.inferred }
        return outcome
    }
}
