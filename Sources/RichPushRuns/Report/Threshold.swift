import RichPush

/// One pass mark of a CI gate, in the style k6 users know: a metric, a comparison and a limit.
///
/// The grammar (spaces are allowed between the parts):
///
/// ```
/// threshold  = metric operator number [unit]
/// metric     = display | p50 | p90 | p95 | p99 | http_4xx | http_5xx | errors
///            | would_crash | configuration_error | not_run | reason:CODE
/// operator   = "<" | "<=" | ">" | ">=" | "==" | "!="
/// number     = digits ["." digits]
/// unit       = "%"  (rates: required)  |  "ms" | "s"  (durations: optional, ms when absent)
///            | nothing (counts)
/// ```
///
/// k6's spellings are read too: `p(95)<200` is `p95<200ms` (k6 durations are milliseconds), and a
/// rate as a fraction, `rate<0.01` (the share of devices whose attachment would not show, k6's
/// `http_req_failed`) or `METRIC:rate>=0.99` for any rate metric (`display:rate>=0.99`), is that
/// many percent.
///
/// Rates are percentages of devices (bench) or payloads (batch): `display>=99%`, `http_5xx<1%`.
/// A rate without `%` is refused, so `display>=0.99` cannot mean 0.99 % by accident. Durations are
/// end-to-end latency percentiles of a bench in milliseconds: `p95<800ms`, `p99<=1.5s`. Counts are
/// whole numbers without a unit: `would_crash==0`, `reason:http-status<=3`.
///
/// ```swift
/// let threshold = try Threshold(parsing: "display>=99%", for: .bench)
/// threshold.expression   // "display>=99%"
/// ```
package struct Threshold: Sendable, Equatable, CustomStringConvertible {
    /// How the measured value is compared with the limit.
    package enum Comparison: String, Sendable, CaseIterable {
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case equal = "=="
        case notEqual = "!="

        /// Whether `actual` meets `limit`. Rates and durations are compared to within 1e-9, so
        /// 99.0 % read back from a float still meets `>=99%`.
        package func holds(_ actual: Double, _ limit: Double) -> Bool {
            let tolerance = 1e-9
            switch self {
            case .less: return actual < limit - tolerance
            case .lessOrEqual: return actual <= limit + tolerance
            case .greater: return actual > limit + tolerance
            case .greaterOrEqual: return actual + tolerance >= limit
            case .equal: return abs(actual - limit) <= tolerance
            case .notEqual: return abs(actual - limit) > tolerance
            }
        }
    }

    package var metric: GateMetric
    package var comparison: Comparison
    /// The limit in the metric's unit: percent, milliseconds or a count.
    package var limit: Double
    /// Where the threshold came from, as the report names it: `default`, `threshold`, or what the
    /// caller sets (a command line names its option).
    package var origin: String

    package init(_ metric: GateMetric, _ comparison: Comparison, _ limit: Double, origin: String = "threshold") {
        self.metric = metric
        self.comparison = comparison
        self.limit = limit
        self.origin = origin
    }

    /// The longest threshold text read: far above any real one, so a hostile string costs nothing.
    package static let maxLength = 200

    /// Reads `text` in the grammar above; `kind` says which metrics exist.
    package init(parsing text: String, for kind: GateKind, origin: String = "threshold") throws(ThresholdError) {
        guard text.utf8.count <= Self.maxLength else {
            throw ThresholdError(text, "is longer than \(Self.maxLength) characters", kind: kind)
        }
        let scalars = Array(Self.readingK6(text).unicodeScalars.filter { $0 != " " && $0 != "\t" })
        let operatorStart = scalars.firstIndex { "<>=!".unicodeScalars.contains($0) }
        guard let operatorStart, operatorStart > 0 else {
            throw ThresholdError(text, "needs a metric, an operator and a number, for example display>=99%", kind: kind)
        }
        let name = String(String.UnicodeScalarView(scalars[..<operatorStart]))
        guard let metric = GateMetric(name: name, for: kind) else {
            throw ThresholdError(text, "names no metric '\(name)'", kind: kind)
        }
        var rest = scalars[operatorStart...]
        let two = String(String.UnicodeScalarView(rest.prefix(2)))
        let one = String(String.UnicodeScalarView(rest.prefix(1)))
        guard let comparison = Comparison(rawValue: two) ?? Comparison(rawValue: one) else {
            throw ThresholdError(text, "has no operator: use <, <=, >, >=, == or !=", kind: kind)
        }
        rest = rest.dropFirst(comparison.rawValue.unicodeScalars.count)
        let digits = rest.prefix { ("0"..."9").contains($0) || $0 == "." }
        let unit = String(String.UnicodeScalarView(rest.dropFirst(digits.count)))
        let number = String(String.UnicodeScalarView(digits))
        guard !number.isEmpty, !number.hasPrefix("."), !number.hasSuffix("."),
            number.filter({ $0 == "." }).count <= 1, let value = Double(number), value.isFinite
        else {
            throw ThresholdError(
                text, "needs a number after '\(comparison.rawValue)', for example 99 or 0.5", kind: kind)
        }
        let limit: Double
        switch (metric.unit, unit) {
        case (.percent, "%"): limit = value
        case (.percent, _):
            throw ThresholdError(text, "is a rate: give it in percent, for example \(metric.name)<1%", kind: kind)
        case (.milliseconds, "ms"), (.milliseconds, ""): limit = value
        case (.milliseconds, "s"): limit = value * 1000
        case (.milliseconds, _):
            throw ThresholdError(
                text, "is a duration: give it in ms or s, for example \(metric.name)<800ms", kind: kind)
        case (.count, ""): limit = value
        case (.count, _):
            throw ThresholdError(text, "is a count: give a whole number without a unit", kind: kind)
        }
        if metric.unit == .percent, limit > 100 {
            throw ThresholdError(text, "is a rate: the limit must be 0% to 100%", kind: kind)
        }
        if metric.unit == .count, limit.rounded() != limit {
            throw ThresholdError(text, "is a count: give a whole number", kind: kind)
        }
        if metric.unit == .milliseconds, limit > 86_400_000 {
            throw ThresholdError(text, "is over a day (86400 s)", kind: kind)
        }
        self.init(metric, comparison, limit, origin: origin)
    }

    /// `text` with k6's spellings turned into richpush's (`p(95)` → `p95`, `rate<0.01` → `errors<1%`,
    /// `display:rate>=0.99` → `display>=99%`); any other text as it is.
    static func readingK6(_ text: String) -> String {
        var compact = String(text.unicodeScalars.filter { $0 != " " && $0 != "\t" })
        // p(N) -> pN, wherever it stands (k6 writes `p(95)<200`).
        if compact.hasPrefix("p("), let close = compact.firstIndex(of: ")") {
            let inside = compact[compact.index(compact.startIndex, offsetBy: 2)..<close]
            if !inside.isEmpty, inside.allSatisfy({ $0.isASCII && $0.isNumber }) {
                compact = "p" + inside + compact[compact.index(after: close)...]
            }
        }
        // [METRIC:]rate OP FRACTION -> METRIC OP PERCENT%.
        var metric = "errors"
        var rest = Substring(compact)
        if let colon = compact.firstIndex(of: ":"), compact[compact.index(after: colon)...].hasPrefix("rate") {
            metric = String(compact[..<colon])
            rest = compact[compact.index(after: colon)...]
        }
        guard rest.hasPrefix("rate") else { return compact }
        let expression = rest.dropFirst("rate".count)
        guard
            let comparison = Comparison.allCases.sorted(by: { $0.rawValue.count > $1.rawValue.count })
                .first(where: { expression.hasPrefix($0.rawValue) })
        else { return compact }
        let number = expression.dropFirst(comparison.rawValue.count)
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            let fraction = Double(number), (0...1).contains(fraction)
        else { return compact }
        var percent = String(format: "%.6f", fraction * 100)
        while percent.hasSuffix("0") { percent.removeLast() }
        if percent.hasSuffix(".") { percent.removeLast() }
        return metric + comparison.rawValue + percent + "%"
    }

    /// The threshold as canonical text: `display>=99%`, `p95<800ms`, `would_crash==0`.
    package var expression: String {
        metric.name + comparison.rawValue + Threshold.format(limit) + metric.unit.suffix
    }

    package var description: String { expression }

    /// A limit or a measurement without trailing zeros: `99`, `99.5`, `0.25`.
    static func format(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        if rounded == rounded.rounded() && abs(rounded) < 1e15 { return String(Int64(rounded)) }
        var text = String(format: "%.2f", rounded)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}

/// Which kind of run a threshold measures: each has its own metrics.
package enum GateKind: String, Sendable {
    case bench
    case batch
}

/// What a threshold measures.
package enum GateMetric: Sendable, Hashable {
    /// Share of devices (bench) or of payloads that asked for an attachment (batch) that would show
    /// it, in percent. Devices or payloads never run count as not shown.
    case display
    /// An end-to-end latency percentile of a bench (50, 90, 95 or 99), in milliseconds.
    case latency(percentile: Int)
    /// Share of the devices run that got an HTTP 4xx answer, in percent.
    case http4xx
    /// Share of the devices run that got an HTTP 5xx answer, in percent.
    case http5xx
    /// Share of the devices run whose attachment would not show (any verdict but attached), in percent.
    case errors
    /// Devices or payloads whose content extension would crash (when the app is known).
    case wouldCrash
    /// Devices or payloads whose app's content extensions are misconfigured for their category.
    case configurationError
    /// Devices or payloads never run to completion (a time limit or an interruption).
    case notRun
    /// Devices or payloads with this reason code.
    case reason(ReasonCode)

    /// The unit a metric's limit and value are in.
    package enum Unit: String, Sendable, Codable {
        case percent = "%"
        case milliseconds = "ms"
        case count

        /// What follows the number in an expression.
        var suffix: String { self == .count ? "" : rawValue }
    }

    /// The name a threshold uses.
    package var name: String {
        switch self {
        case .display: "display"
        case .latency(let percentile): "p\(percentile)"
        case .http4xx: "http_4xx"
        case .http5xx: "http_5xx"
        case .errors: "errors"
        case .wouldCrash: "would_crash"
        case .configurationError: "configuration_error"
        case .notRun: "not_run"
        case .reason(let code): "reason:\(code.rawValue)"
        }
    }

    package var unit: Unit {
        switch self {
        case .display, .http4xx, .http5xx, .errors: .percent
        case .latency: .milliseconds
        case .wouldCrash, .configurationError, .notRun, .reason: .count
        }
    }

    /// The metrics of `kind`, in the order the documentation lists them (`reason:CODE` stands for every code).
    package static func all(for kind: GateKind) -> [GateMetric] {
        switch kind {
        case .bench:
            [
                .display, .latency(percentile: 50), .latency(percentile: 90), .latency(percentile: 95),
                .latency(percentile: 99), .http4xx, .http5xx, .errors, .wouldCrash, .configurationError, .notRun,
            ]
        case .batch: [.display, .errors, .wouldCrash, .configurationError, .notRun]
        }
    }

    /// The metric called `name` in `kind`'s runs, or nil.
    package init?(name: String, for kind: GateKind) {
        if name.hasPrefix("reason:") {
            guard let code = ReasonCode(rawValue: String(name.dropFirst("reason:".count))) else { return nil }
            self = .reason(code)
            return
        }
        guard let metric = Self.all(for: kind).first(where: { $0.name == name }) else { return nil }
        self = metric
    }
}

/// A threshold that cannot be read: it names the text, what is wrong, and the metrics there are.
package struct ThresholdError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text as given.
    package var text: String
    /// What is wrong and how to write it.
    package var message: String

    init(_ text: String, _ problem: String, kind: GateKind) {
        self.text = text
        let metrics = GateMetric.all(for: kind).map(\.name) + ["reason:CODE"]
        // The text is the user's: shown short, without control characters (a terminal would obey them).
        func shown(_ text: String, limit: Int) -> String {
            var view = String.UnicodeScalarView()
            for scalar in text.unicodeScalars.prefix(limit) {
                view.append(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) ? "?" : scalar)
            }
            return String(view)
        }
        message =
            "the threshold '\(shown(text, limit: 80))' \(shown(problem, limit: 200)). A threshold is METRIC OPERATOR "
            + "NUMBER[UNIT], for example display>=99% or p95<800ms; \(kind.rawValue) metrics: "
            + metrics.joined(separator: ", ")
    }

    package var description: String { message }
}
