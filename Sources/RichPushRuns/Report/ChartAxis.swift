import Foundation
import RichPush

/// A chart axis fitted to its data: starts at 0, steps of 1, 2 or 5 times a power of ten, and ends at
/// the first step at or above the largest value, so the data fills the chart and every tick is round.
///
/// ```swift
/// let axis = ChartAxis.fitted(to: 1003)   // step 200, ticks 0, 200, ..., 1200
/// ```
package struct ChartAxis: Sendable, Equatable {
    package let step: Double
    package let top: Double

    /// The axis for values from 0 to `maximum`, with `ticks` to `ticks + 2` intervals (the finest round step
    /// that fits, so the top stays close to the data); `integer` keeps steps whole (counts of devices).
    package static func fitted(to maximum: Double, ticks: Int = 5, integer: Bool = false) -> ChartAxis {
        let largest = maximum.isFinite && maximum > 0 ? maximum : 1
        let most = Double(max(1, ticks) + 2)
        var step = roundStep(atLeast: largest / most)
        while (largest / step).rounded(.up) > most { step = roundStep(atLeast: step * 1.5) }
        if integer { step = max(1, step) }
        let top = (largest / step).rounded(.up) * step
        return ChartAxis(step: step, top: top)
    }

    /// The smallest 1, 2 or 5 times a power of ten that is at least `value`.
    package static func roundStep(atLeast value: Double) -> Double {
        guard value > 0, value.isFinite else { return 1 }
        let magnitude = pow(10, floor(log10(value)))
        for factor in [1.0, 2, 5, 10] where factor * magnitude >= value * (1 - 1e-12) { return factor * magnitude }
        return 10 * magnitude
    }

    /// The tick values from 0 to `top`.
    package var ticks: [Double] {
        let count = Int((top / step).rounded())
        return (0...max(0, count)).map { Double($0) * step }
    }

    /// A tick value as text, with as many decimals as the step needs.
    package func label(_ value: Double) -> String {
        let decimals = step >= 1 ? 0 : Int(ceil(-log10(step) - 1e-9))
        return String(format: "%.\(decimals)f", value)
    }
}
