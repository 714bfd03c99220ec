import CurlKit

extension Duration {
    /// The duration in whole milliseconds, rounded down (saturating: a huge duration never traps).
    public var wholeMilliseconds: Int64 { saturatingMilliseconds }

    /// The duration in milliseconds, with fractions, for reports.
    public var inMilliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    /// The duration in seconds, with fractions.
    public var inSeconds: Double { inMilliseconds / 1000 }
}
