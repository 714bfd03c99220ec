/// The one conversion from `Duration` to integers used across richpush: it never traps.
extension Duration {
    /// The duration in whole microseconds, rounded down, saturating at `Int64`'s bounds instead of trapping.
    package var saturatingMicroseconds: Int64 { saturating(unitsPerSecond: 1_000_000) }

    /// The duration in whole milliseconds, rounded down, saturating at `Int64`'s bounds instead of trapping.
    package var saturatingMilliseconds: Int64 { saturating(unitsPerSecond: 1000) }

    /// Whole units of `1 / unitsPerSecond` seconds (a divisor of 10^18), saturating at `Int64`'s bounds.
    private func saturating(unitsPerSecond: Int64) -> Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: unitsPerSecond)
        let (total, overflowAgain) = scaled.addingReportingOverflow(
            attoseconds / (1_000_000_000_000_000_000 / unitsPerSecond))
        guard !overflow, !overflowAgain else { return seconds < 0 ? .min : .max }
        return total
    }
}
