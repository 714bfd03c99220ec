import RichPush
import RichPushRuns

/// A gate threshold as a user writes it (`display>=99%`): untrusted text from a command line or a CI file.
///
/// - Reading never traps, for bench and for batch metrics.
/// - An accepted threshold's canonical expression reads back as the same threshold, and its limit
///   is finite and within its unit's range.
/// - A refusal's message carries no control character of the input and lists the metrics.
enum ThresholdInvariants {
    static func check(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        for kind in [GateKind.bench, .batch] {
            do throws(ThresholdError) {
                let threshold = try Threshold(parsing: text, for: kind)
                require(threshold.limit.isFinite && threshold.limit >= 0, "a limit out of range: \(threshold.limit)")
                if threshold.metric.unit == .percent { require(threshold.limit <= 100, "a rate over 100%") }
                let again = try? Threshold(parsing: threshold.expression, for: kind)
                require(again == threshold, "'\(threshold.expression)' does not read back as itself")
            } catch {
                require(
                    !error.message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F },
                    "a refusal repeats a control character")
                require(error.message.contains("metrics: display"), "a refusal does not list the metrics")
            }
        }
    }
}
