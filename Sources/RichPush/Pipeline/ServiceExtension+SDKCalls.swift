import Foundation

/// The SDKs' own network calls (``SDKCall``): Customer.io's delivery metric, which display waits
/// for, and OneSignal's receipt, sent after display with a jitter. They go to `--sdk-endpoint` only;
/// without one their time is modelled (``SDKCallPolicy``).
extension ServiceExtension {
    /// One call to make for one payload.
    struct PlannedCall: Sendable {
        let call: SDKCall
        let path: String
        let body: [UInt8]
        let headers: [String]
        let jitter: Duration
    }

    /// A payload's run with its SDK's calls: the blocking ones beside the download, the others after display.
    func processWithCalls(_ prepared: PreparedPayload, dialect: Dialect, arrivedAt arrival: ContinuousClock.Instant)
        async -> ProcessResult
    {
        let deadline = arrival + policy.budget
        let calls = plannedCalls(dialect, prepared: prepared)
        let blocking = calls.filter(\.call.blocksDisplay)
        // Customer.io runs the metric beside the image (`async let`) and waits for both.
        async let blockingReports = performAll(blocking, deadline: deadline)
        var (outcome, root) = await run(prepared, deadline: deadline)
        var reports = await blockingReports
        outcome = Self.finish(outcome, dialect: dialect, root: root)
        if !blocking.isEmpty, ContinuousClock.now >= deadline, outcome.verdict != .expired {
            outcome = Self.expiredByCall(outcome, dialect: dialect, root: root, reports: reports)
        }
        let displayed = ContinuousClock.now
        for planned in calls where !planned.call.blocksDisplay {
            // The extension's process lives up to 30 s after display for it (OneSignal's MAX_NSE_LIFETIME).
            reports.append(await perform(planned, deadline: displayed + .seconds(30), waitsJitter: true))
        }
        outcome.sdkCalls = reports.isEmpty ? nil : reports
        return emit(outcome, root: root, bytes: prepared.bytes, started: arrival, displayedAt: displayed)
    }

    /// The outcome when display waited for a call past the budget: iOS calls `serviceExtensionTimeWillExpire`.
    static func expiredByCall(_ outcome: Outcome, dialect: Dialect, root: JSONValue?, reports: [SDKCallReport])
        -> Outcome
    {
        var expired = outcome
        let imageDone = outcome.verdict == .attached
        let call = reports.first { $0.blocksDisplay }
        let took = call.map { String(format: "%.0f", $0.latencyMilliseconds) } ?? "?"
        expired.verdict = .expired
        expired.reason = .deadlineExceeded
        expired.unError = nil
        expired.message =
            "\(dialect.title) holds the notification until its \(call?.name ?? "call") is sent; it took \(took) ms "
            + "and the budget ran out: iOS calls serviceExtensionTimeWillExpire, and \(dialect.title) delivers "
            + (imageDone ? "the content it composed, with the image." : "the original content.")
        var delivered = dialect.delivered(imageDone ? .attached : .expired, attached: imageDone ? 1 : 0, root: root)
        if !imageDone { delivered.content = "original" }
        expired.delivered = delivered
        if !imageDone { expired.attachment = nil }
        return expired
    }

    /// The calls this payload makes: none for a push iOS does not hand to the extension.
    func plannedCalls(_ dialect: Dialect, prepared: PreparedPayload) -> [PlannedCall] {
        let root: JSONValue
        switch prepared.stage {
        case .decided(let outcome, let decidedRoot):
            guard outcome.verdict != .rejected, outcome.verdict != .notInvoked, let decidedRoot else { return [] }
            root = decidedRoot
        case .attachment(_, let attachmentRoot), .media(_, let attachmentRoot):
            root = attachmentRoot
        }
        var planned: [PlannedCall] = []
        for call in dialect.networkCalls {
            switch dialect.name {
            case "customerio":
                guard let id = root.string(at: ["CIO-Delivery-ID"]), let token = root.string(at: ["CIO-Delivery-Token"])
                else { continue }
                let body: JSONValue = .object([
                    ("anonymousId", .string(id)), ("event", .string("Report Delivery Event")),
                    (
                        "properties",
                        .object([
                            ("recipient", .string(token)), ("metric", .string("delivered")),
                            ("deliveryId", .string(id)),
                        ])
                    ),
                ])
                // Basic base64(cdpApiKey + ":"), with a stand-in key: richpush has none of the app's.
                let key = Data("richpush-cdp-key:".utf8).base64EncodedString()
                planned.append(
                    PlannedCall(
                        call: call, path: call.path, body: body.utf8,
                        headers: ["Content-Type: application/json", "Authorization: Basic " + key], jitter: .zero))
            case "onesignal":
                guard policy.sdkCalls.receipts,
                    let id = root.string(at: ["os_data", "i"]) ?? root.string(at: ["custom", "i"])
                else { continue }
                let body: JSONValue = .object([
                    ("app_id", .string("richpush-app")), ("player_id", .null), ("device_type", .number("0")),
                ])
                let encoded = id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? id
                planned.append(
                    PlannedCall(
                        call: call, path: call.path.replacingOccurrences(of: "{id}", with: encoded), body: body.utf8,
                        headers: ["Content-Type: application/json"], jitter: jitter(for: id)))
            default:
                continue
            }
        }
        return planned
    }

    /// OneSignal's 0-to-24-s jitter, drawn once per notification id (stable, so runs compare).
    func jitter(for id: String) -> Duration { Self.jitter(for: id, max: policy.sdkCalls.maxJitter) }

    static func jitter(for id: String, max: Duration = .seconds(24)) -> Duration {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in id.utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
        return max * (Double(hash % 10_000) / 10_000)
    }

    private func performAll(_ calls: [PlannedCall], deadline: ContinuousClock.Instant) async -> [SDKCallReport] {
        var reports: [SDKCallReport] = []
        for call in calls { reports.append(await perform(call, deadline: deadline, waitsJitter: false)) }
        return reports
    }

    /// Sends one call to the endpoint, or models it: a blocking call's modelled time is waited, as
    /// the phone would wait for the answer.
    private func perform(_ planned: PlannedCall, deadline: ContinuousClock.Instant, waitsJitter: Bool) async
        -> SDKCallReport
    {
        let jitter = planned.jitter == .zero ? nil : planned.jitter.inMilliseconds
        var report = SDKCallReport(
            name: planned.call.name, method: planned.call.method, url: nil, modelled: true, status: nil,
            latencyMilliseconds: policy.sdkCalls.latency.inMilliseconds, jitterMilliseconds: jitter,
            blocksDisplay: planned.call.blocksDisplay, error: nil)
        guard let endpoint = policy.sdkCalls.endpoint else {
            if planned.call.blocksDisplay {
                let until = min(deadline, .now + policy.sdkCalls.latency)
                try? await Task.sleep(until: until, clock: .continuous)
            }
            return report
        }
        if waitsJitter, planned.jitter > .zero {
            try? await Task.sleep(until: min(deadline, .now + planned.jitter), clock: .continuous)
        }
        let url = SDKCallPolicy.url(endpoint: endpoint, path: planned.path)
        let started = ContinuousClock.now
        let (status, error) = await engine.send(
            method: planned.call.method, url: url, body: planned.body, headers: planned.headers, deadline: deadline,
            policy: policy.fetch)
        report.url = url
        report.modelled = false
        report.status = status
        report.error = error
        report.latencyMilliseconds = (ContinuousClock.now - started).inMilliseconds
        return report
    }
}
