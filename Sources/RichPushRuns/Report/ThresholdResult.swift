import RichPush

/// One threshold's result, as reports carry it (bench's `thresholds`, batch's `summary.json`).
package struct ThresholdResult: Sendable, Codable, Equatable {
    /// The metric: `display_rate` and `p99_end_to_end` for `display` and `p99` (the names reports
    /// have always used), otherwise the metric's name in the expression (`p95`, `would_crash`).
    package var name: String
    /// Where the threshold came from: `default` (the gate's defaults), `threshold`, or what the
    /// caller named (a command line names its option).
    package var option: String
    /// The threshold as text, in the grammar of ``Threshold``: `display>=99%`.
    package var expression: String?
    /// The unit of ``limit`` and ``actual``: `%`, `ms` or `count`.
    package var unit: GateMetric.Unit?
    package var limit: Double
    /// The measured value, rounded to what it means (0.1 for percent, 0.01 for milliseconds).
    package var actual: Double
    package var passed: Bool
    /// The result in a sentence: the measured value, the threshold, and by how much it failed.
    package var message: String

    package init(_ threshold: Threshold, actual: Double) {
        let metric = threshold.metric
        name =
            switch metric {
            case .display: "display_rate"
            case .latency(99): "p99_end_to_end"
            default: metric.name
            }
        option = threshold.origin
        expression = threshold.expression
        unit = metric.unit
        limit = threshold.limit
        let rounded = Self.round(actual, unit: metric.unit)
        self.actual = rounded
        passed = threshold.comparison.holds(actual, threshold.limit)
        let measured = Self.text(rounded, unit: metric.unit)
        let what: String =
            switch metric {
            case .latency(let p): "p\(p) end-to-end"
            default: metric.name
            }
        if passed {
            message = "\(what) \(measured) meets the threshold \(threshold.expression)"
        } else {
            let gap = abs(actual - threshold.limit)
            let by =
                switch metric.unit {
                case .percent: " by " + Threshold.format((gap * 10).rounded() / 10) + " points"
                case .milliseconds: " by " + Threshold.format(gap) + " ms"
                case .count: ""
                }
            message = "\(what) \(measured) fails the threshold \(threshold.expression)\(by)"
        }
    }

    /// A measurement rounded to what it means: a percent to 0.1, milliseconds to 0.01, a count whole.
    static func round(_ value: Double, unit: GateMetric.Unit) -> Double {
        guard value.isFinite else { return 0 }
        switch unit {
        case .percent: return (value * 10).rounded() / 10
        case .milliseconds: return (value * 100).rounded() / 100
        case .count: return value.rounded()
        }
    }

    /// `97.5%`, `812.25 ms`, `3`.
    static func text(_ value: Double, unit: GateMetric.Unit) -> String {
        switch unit {
        case .percent: return String(format: "%.1f%%", value)
        case .milliseconds: return Threshold.format(value) + " ms"
        case .count: return Threshold.format(value)
        }
    }
}
