/// Numbers in reports rounded to what they mean: milliseconds to 0.01, seconds to 0.001 (a
/// millisecond), per-second rates to 0.1, shares (0 to 1) to 0.001 (a tenth of a percent).
///
/// `elapsed_seconds: 0.569`, not `0.5690729999999999`. Counts and histograms, which merges add
/// up, are never rounded: only the values derived from them, so merging stays exact.
package enum Rounding {
    package static func milliseconds(_ value: Double) -> Double { round(value, 100) }
    package static func seconds(_ value: Double) -> Double { round(value, 1000) }
    package static func perSecond(_ value: Double) -> Double { round(value, 10) }
    package static func share(_ value: Double) -> Double { round(value, 1000) }

    static func round(_ value: Double, _ scale: Double) -> Double {
        guard value.isFinite else { return 0 }
        let scaled = value * scale
        return abs(scaled) < 9e15 ? scaled.rounded() / scale : value
    }
}
