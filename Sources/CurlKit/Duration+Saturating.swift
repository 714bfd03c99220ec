/// The one conversion from `Duration` to integers used across richpush: it never traps.
extension Duration {
    /// The duration in whole microseconds, rounded down, saturating at `Int64`'s bounds instead of trapping.
    public var saturatingMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000)
        if overflow2 { return seconds < 0 ? .min : .max }
        return total
    }

    /// The duration in whole milliseconds, rounded down, saturating at `Int64`'s bounds instead of trapping.
    public var saturatingMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        if overflow2 { return seconds < 0 ? .min : .max }
        return total
    }
}
