import Foundation

/// The SDKs' own network calls (``SDKCall``, described in each dialect): Customer.io's delivery
/// metric, which display waits for; CleverTap's Notification Viewed, beside the download; OneSignal's
/// receipt, beside the download with a jitter from arrival. They go to `--sdk-endpoint` only; without one their time is
/// modelled (``SDKCallPolicy``). Nothing here knows an SDK: each call's description says when it
/// starts, how long it may take and what it sends.
extension ServiceExtension {
    /// One call to make for one payload.
    struct PlannedCall: Sendable {
        let call: SDKCall
        let request: SDKRequest
        let jitter: Duration
    }

    /// A payload's run with its SDK's calls: those that start with the download run beside it
    /// (display waits for the blocking ones), the others after display.
    func processWithCalls(_ prepared: PreparedPayload, dialect: Dialect, arrivedAt arrival: ContinuousClock.Instant)
        async -> ProcessResult
    {
        let deadline = arrival + policy.budget
        let calls = plannedCalls(dialect, prepared: prepared)
        let blocking = calls.filter(\.call.blocksDisplay)
        let beside = calls.filter { !$0.call.blocksDisplay && $0.call.start != .afterDisplay }
        // Customer.io runs the metric beside the image (`async let`) and waits for both.
        async let blockingReports = performAll(blocking, arrival: arrival)
        async let besideReports = performAll(beside, arrival: arrival)
        var (outcome, root) = await run(prepared, deadline: deadline)
        var reports = await blockingReports
        outcome = Self.finish(outcome, dialect: dialect, root: root)
        if !blocking.isEmpty, ContinuousClock.now >= deadline, outcome.verdict != .expired {
            outcome = Self.expiredByCall(outcome, dialect: dialect, root: root, reports: reports)
        }
        let displayed = ContinuousClock.now
        // The extension's process lives on after display for the calls still running, up to the
        // budget; those that start after display do not wait for those beside the download.
        async let afterReports = performAfterDisplay(
            calls.filter { $0.call.start == .afterDisplay }, displayed, processEnd: deadline)
        reports += await besideReports
        reports += await afterReports
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

    /// The calls this payload makes: none for a push iOS does not hand to the extension, none the
    /// app must turn on unless `--sdk-receipts` says it did, none whose request this payload does
    /// not make (Customer.io without its delivery id), none that richpush lists but does not send.
    func plannedCalls(_ dialect: Dialect, prepared: PreparedPayload) -> [PlannedCall] {
        let root: JSONValue
        switch prepared.stage {
        case .decided(let outcome, let decidedRoot):
            guard outcome.verdict != .rejected, outcome.verdict != .notInvoked, let decidedRoot else { return [] }
            root = decidedRoot
        case .media(_, let attachmentRoot):
            root = attachmentRoot
        }
        let context = SDKCallContext(root: root, epochSeconds: Int(Date().timeIntervalSince1970))
        return dialect.networkCalls.compactMap { call in
            guard !call.optIn || policy.sdkCalls.receipts, let request = call.request?(context) else { return nil }
            let jitter =
                call.jitterSeconds > 0 && request.jitterKey != nil
                ? Self.jitter(
                    for: request.jitterKey ?? "", max: min(policy.sdkCalls.maxJitter, .seconds(call.jitterSeconds)))
                : .zero
            return PlannedCall(call: call, request: request, jitter: jitter)
        }
    }

    /// OneSignal's 0-to-24-s jitter, drawn once per notification id (stable, so runs compare): whole
    /// seconds, as `arc4random_uniform(25)` draws them, when the bound is a second or more (a shorter
    /// bound, which tests set, is drawn in fractions).
    func jitter(for id: String) -> Duration { Self.jitter(for: id, max: policy.sdkCalls.maxJitter) }

    static func jitter(for id: String, max: Duration = .seconds(24)) -> Duration {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in id.utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
        let seconds = Int(max.inSeconds.rounded(.down))
        guard seconds >= 1 else { return max * (Double(hash % 10_000) / 10_000) }
        return .seconds(Int(hash % UInt64(seconds + 1)))
    }

    /// The calls that start after display, one after another: each up to 30 s after display
    /// (OneSignal's MAX_NSE_LIFETIME), or its own timeout from its start, and never past `processEnd`.
    private func performAfterDisplay(
        _ calls: [PlannedCall], _ displayed: ContinuousClock.Instant, processEnd: ContinuousClock.Instant
    ) async -> [SDKCallReport] {
        var reports: [SDKCallReport] = []
        for planned in calls {
            let until = displayed + planned.jitter + (planned.call.timeout ?? .seconds(30))
            reports.append(
                await perform(
                    planned, startingAt: displayed, deadline: min(until, displayed + .seconds(30), processEnd),
                    processEnd: processEnd))
        }
        return reports
    }

    /// The calls that start with the download, one after another, each from its own start
    /// (arrival plus its delay): the budget and the call's own timeout bound each.
    ///
    /// The emulated extension's process ends with the budget (`--budget`, which a command never
    /// outlives): a call beside the download whose jitter starts it later is reported not sent, and
    /// one still waiting for its answer then is cut off, as when iOS ends the process. On a phone the
    /// process may live on for a while after display; no source says how long, so richpush does not
    /// count on it.
    private func performAll(_ calls: [PlannedCall], arrival: ContinuousClock.Instant) async -> [SDKCallReport] {
        var reports: [SDKCallReport] = []
        for planned in calls {
            var start = arrival
            if case .withDownload(let delay) = planned.call.start { start = arrival + delay }
            var until = arrival + policy.budget
            if let timeout = planned.call.timeout { until = min(until, start + timeout) }
            reports.append(
                await perform(planned, startingAt: start, deadline: until, processEnd: arrival + policy.budget))
        }
        return reports
    }

    /// Sends one call to the endpoint at `start` plus its jitter, or models it: a blocking call's
    /// modelled time is waited, as the phone would wait for the answer. A call with no answer when
    /// the process ends (`processEnd`, the budget) says it was cut off.
    private func perform(
        _ planned: PlannedCall, startingAt start: ContinuousClock.Instant, deadline: ContinuousClock.Instant,
        processEnd: ContinuousClock.Instant
    )
        async -> SDKCallReport
    {
        let jitter = planned.jitter == .zero ? nil : planned.jitter.inMilliseconds
        var report = SDKCallReport(
            name: planned.call.name, method: planned.call.method, url: nil, modelled: true, status: nil,
            latencyMilliseconds: policy.sdkCalls.latency.inMilliseconds, jitterMilliseconds: jitter,
            blocksDisplay: planned.call.blocksDisplay, error: nil)
        guard let endpoint = policy.sdkCalls.endpoint else {
            if planned.call.blocksDisplay {
                let until = min(deadline, max(.now, start) + policy.sdkCalls.latency)
                try? await Task.sleep(until: until, clock: .continuous)
            }
            return report
        }
        let begin = start + planned.jitter
        let url = SDKCallPolicy.url(endpoint: endpoint, path: planned.request.path)
        guard begin < deadline else {
            // Its jitter outlasts the extension's process: the call is never made.
            report.modelled = false
            report.latencyMilliseconds = 0
            report.error = "not sent: the extension's process ends before its start"
            return report
        }
        if begin > .now { try? await Task.sleep(until: begin, clock: .continuous) }
        let started = ContinuousClock.now
        let (status, error) = await engine.send(
            method: planned.call.method, url: url, body: planned.request.body, headers: planned.request.headers,
            deadline: deadline, policy: policy.fetch)
        report.url = url
        report.modelled = false
        report.status = status
        report.error = error
        if status == nil, deadline >= processEnd, ContinuousClock.now >= processEnd {
            report.error =
                "cut off: no answer when the extension's process ended with the budget "
                + "(\(Rounding.seconds(policy.budget.inSeconds)) s)"
        }
        report.latencyMilliseconds = (ContinuousClock.now - started).inMilliseconds
        return report
    }
}
