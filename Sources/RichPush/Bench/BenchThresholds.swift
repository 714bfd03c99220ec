import Foundation

/// The pass marks of a bench run: a least display rate (`--fail-under`) and a highest p99
/// end-to-end latency (`--max-p99`).
public struct BenchThresholds: Sendable, Equatable {
    /// The least share of devices, in percent, that must show the attachment.
    public var minDisplayPercent: Double?
    /// The highest p99 end-to-end latency, in milliseconds.
    public var maxP99Milliseconds: Double?

    public init(minDisplayPercent: Double? = nil, maxP99Milliseconds: Double? = nil) {
        self.minDisplayPercent = minDisplayPercent
        self.maxP99Milliseconds = maxP99Milliseconds
    }

    /// Each threshold given, checked against a finalized report.
    public func evaluate(_ report: BenchReport) -> [ThresholdResult] {
        var results: [ThresholdResult] = []
        if let limit = minDisplayPercent {
            let actual = report.displayRate * 100
            let passed = actual + 1e-9 >= limit
            results.append(
                ThresholdResult(
                    name: "display_rate", option: Setting.failUnder.description, limit: limit, actual: actual,
                    passed: passed,
                    message: passed
                        ? String(format: "display rate %.1f%% meets \(Setting.failUnder) %g%%", actual, limit)
                        : String(
                            format: "display rate %.1f%% is under \(Setting.failUnder) %g%% by %.1f points", actual,
                            limit,
                            limit - actual)))
        }
        if let limit = maxP99Milliseconds {
            let actual = report.percentilesMilliseconds["end_to_end"]?["p99"] ?? 0
            let passed = actual <= limit
            results.append(
                ThresholdResult(
                    name: "p99_end_to_end", option: Setting.maxP99.description, limit: limit, actual: actual,
                    passed: passed,
                    message: passed
                        ? String(format: "p99 end-to-end %.1f ms meets \(Setting.maxP99) %g ms", actual, limit)
                        : String(
                            format: "p99 end-to-end %.1f ms is over \(Setting.maxP99) %g ms by %.1f ms", actual, limit,
                            actual - limit)))
        }
        return results
    }
}

/// One threshold's result, as the report carries it.
public struct ThresholdResult: Sendable, Codable, Equatable {
    /// `display_rate` or `p99_end_to_end`.
    public var name: String
    /// The option that set it.
    public var option: String
    public var limit: Double
    public var actual: Double
    public var passed: Bool
    /// The result in a sentence: which threshold, and by how much it failed.
    public var message: String
}
