import RichPush

/// The one CI decision of a bench or a batch: every threshold, each with its measured value and
/// PASS/FAIL, from which the exit status, the JUnit file, the text summary and the JSON and HTML
/// reports all follow.
///
/// The gate applies the thresholds given and, for every metric none of them names, that metric's
/// default (``defaults(for:)``):
///
/// - bench: `display>0%` (a bench where nothing displays does not pass), `would_crash==0` and
///   `configuration_error==0`;
/// - batch: `display>=100%` (every requested attachment shows), `would_crash==0` and
///   `configuration_error==0` (an image that shows in a content extension that crashes is a failure).
///
/// So `display>=99%` replaces the display default and keeps the content-extension ones;
/// `would_crash<=5` relaxes that one only. Devices or payloads never run (a time limit, an
/// interruption) count as not shown in `display`: 400 of 2,000 devices run is at most 20 %.
///
/// ```swift
/// let thresholds = [try Threshold(parsing: "display>=99%", for: .bench)]
/// report.thresholds = Gate.results(for: report, thresholds: thresholds)
/// let decision = GateDecision(report)   // decision.passed, decision.lines
/// ```
package enum Gate {
    /// The thresholds applied to a metric no given threshold names.
    package static func defaults(for kind: GateKind) -> [Threshold] {
        let display: Threshold =
            switch kind {
            case .bench: Threshold(.display, .greater, 0, origin: "default")
            case .batch: Threshold(.display, .greaterOrEqual, 100, origin: "default")
            }
        return [
            display, Threshold(.wouldCrash, .equal, 0, origin: "default"),
            Threshold(.configurationError, .equal, 0, origin: "default"),
        ]
    }

    /// `given`, then the default of each metric `given` does not name.
    package static func effective(_ given: [Threshold], kind: GateKind) -> [Threshold] {
        let named = Set(given.map(\.metric))
        return given + defaults(for: kind).filter { !named.contains($0.metric) }
    }

    /// Each effective threshold checked against a finalized bench report.
    package static func results(for report: BenchReport, thresholds: [Threshold]) -> [ThresholdResult] {
        effective(thresholds, kind: .bench).map { ThresholdResult($0, actual: measure($0.metric, in: report)) }
    }

    /// Each effective threshold checked against a batch summary.
    package static func results(for summary: BatchSummary, thresholds: [Threshold]) -> [ThresholdResult] {
        effective(thresholds, kind: .batch).map { ThresholdResult($0, actual: measure($0.metric, in: summary)) }
    }

    /// The value of `metric` in a bench report, in the metric's unit.
    package static func measure(_ metric: GateMetric, in report: BenchReport) -> Double {
        let run = report.devices
        func share(_ count: Int, of total: Int) -> Double { total <= 0 ? 0 : Double(count) / Double(total) * 100 }
        func status(_ range: ClosedRange<Int>) -> Int {
            report.statusCodes.reduce(0) { sum, entry in
                range.contains(Int(entry.key) ?? 0) ? sum &+ entry.value : sum
            }
        }
        switch metric {
        case .display: return share(report.attached, of: report.plannedDevices)
        case .latency(let percentile):
            return report.histograms["end_to_end"].map { histogram in
                Double(histogram.value(atQuantile: Double(percentile) / 100)) / 1000
            } ?? 0
        case .http4xx: return share(status(400...499), of: run)
        case .http5xx: return share(status(500...599), of: run)
        case .errors: return share(run - report.attached, of: run)
        case .wouldCrash: return Double(report.contentExtensions?[ContentOutcome.Kind.wouldCrash.rawValue] ?? 0)
        case .configurationError:
            return Double(report.contentExtensions?[ContentOutcome.Kind.configurationError.rawValue] ?? 0)
        case .notRun: return Double(report.notStarted)
        case .reason(let code): return Double(report.reasons[code.rawValue] ?? 0)
        }
    }

    /// The value of `metric` in a batch summary, in the metric's unit (bench-only metrics are 0).
    package static func measure(_ metric: GateMetric, in summary: BatchSummary) -> Double {
        switch metric {
        case .display:
            let asked = summary.requested + summary.notRun
            return asked <= 0 ? 100 : Double(summary.attached) / Double(asked) * 100
        case .errors:
            // k6's `rate` (http_req_failed): the share of payloads asking for an attachment that would not show it.
            let asked = summary.requested + summary.notRun
            return asked <= 0 ? 0 : Double(asked - summary.attached) / Double(asked) * 100
        case .wouldCrash: return Double(summary.contentExtensions?[ContentOutcome.Kind.wouldCrash.rawValue] ?? 0)
        case .configurationError:
            return Double(summary.contentExtensions?[ContentOutcome.Kind.configurationError.rawValue] ?? 0)
        case .notRun: return Double(summary.notRun)
        case .reason(let code): return Double(summary.reasons[code.rawValue] ?? 0)
        case .latency, .http4xx, .http5xx: return 0
        }
    }
}

/// What the gate decided for one run, read from the results its report carries.
package struct GateDecision: Sendable, Equatable {
    /// Every threshold applied, in order: those given, then the defaults.
    package var results: [ThresholdResult]
    /// Devices or payloads whose content extension would crash, or is misconfigured.
    package var wouldCrash: Int
    package var configurationError: Int
    /// Devices or payloads never run, and all that were planned.
    package var notRun: Int
    package var planned: Int
    /// Devices or payloads that failed because this process ran out of file descriptors: the
    /// client's limit, so the measurement says nothing of the host or the payloads.
    package var outOfDescriptors: Int
    /// `device` or `payload`, for the sentences.
    let unit: String

    /// How the run ends.
    package enum Status: Sendable, Equatable {
        /// Every threshold met.
        case passed
        /// A threshold failed.
        case failed
        /// The client ran out of file descriptors: the run measured the client, not the host.
        case clientLimited
    }

    /// The decision a bench report carries (its `thresholds`, as the gate set them).
    package init(_ report: BenchReport) {
        results = report.thresholds
        wouldCrash = report.contentExtensions?[ContentOutcome.Kind.wouldCrash.rawValue] ?? 0
        configurationError = report.contentExtensions?[ContentOutcome.Kind.configurationError.rawValue] ?? 0
        notRun = report.notStarted
        planned = report.plannedDevices
        outOfDescriptors = report.reasons[ReasonCode.tooManyOpenFiles.rawValue] ?? 0
        unit = "device"
    }

    /// The decision a batch summary carries (its `thresholds`).
    package init(_ summary: BatchSummary) {
        results = summary.thresholds ?? []
        wouldCrash = summary.contentExtensions?[ContentOutcome.Kind.wouldCrash.rawValue] ?? 0
        configurationError = summary.contentExtensions?[ContentOutcome.Kind.configurationError.rawValue] ?? 0
        notRun = summary.notRun
        planned = summary.total
        outOfDescriptors = summary.reasons[ReasonCode.tooManyOpenFiles.rawValue] ?? 0
        unit = "payload"
    }

    /// The thresholds that failed, in order.
    package var failed: [ThresholdResult] { results.filter { !$0.passed } }

    /// Whether every threshold was met.
    package var passed: Bool { failed.isEmpty }

    package var status: Status { outOfDescriptors > 0 ? .clientLimited : passed ? .passed : .failed }

    /// The decision for a log: what was not run, the content-extension failures, each threshold
    /// PASS/FAIL with its measured value, and the verdict.
    package var lines: [String] {
        func count(_ n: Int) -> String { "\(n) \(unit)\(n == 1 ? "" : "s")" }
        var lines: [String] = []
        if notRun > 0 {
            lines.append(
                "Not run: \(count(notRun)) of \(planned) (a time limit or an interruption); they count as not shown.")
        }
        if wouldCrash > 0 {
            lines.append(
                "Content extension: \(count(wouldCrash)) would crash the content extension that shows "
                    + "\(wouldCrash == 1 ? "it" : "them") (the image shows, in a view that crashes).")
        }
        if configurationError > 0 {
            lines.append(
                "Content extension: \(count(configurationError)) meet a misconfigured content extension for "
                    + "their category.")
        }
        for result in results { lines.append((result.passed ? "PASS " : "FAIL ") + result.message + ".") }
        let failures = failed.count
        lines.append(
            failures == 0
                ? "Gate: PASS (\(results.count) threshold\(results.count == 1 ? "" : "s") met)."
                : "Gate: FAIL (\(failures) of \(results.count) threshold\(results.count == 1 ? "" : "s") failed).")
        return lines
    }
}
