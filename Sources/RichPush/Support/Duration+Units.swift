import CurlKit

extension Duration {
    /// The duration in whole milliseconds, rounded down (saturating: a huge duration never traps).
    package var wholeMilliseconds: Int64 { saturatingMilliseconds }

    /// The duration in milliseconds with microsecond resolution, for reports (saturating, like every
    /// conversion here: it goes through CurlKit's ``saturatingMicroseconds``).
    ///
    /// Whole microseconds keep JSON stable: a value written, read back with
    /// ``milliseconds(reported:)`` and written again gives the same text.
    package var inMilliseconds: Double { Double(saturatingMicroseconds) / 1000 }

    /// The duration in seconds, with fractions.
    package var inSeconds: Double { inMilliseconds / 1000 }

    /// The duration a report's millisecond value stands for, to the microsecond; a value that is not a
    /// finite number of milliseconds that fits (read from a file someone edited) saturates, never traps.
    package static func milliseconds(reported value: Double) -> Duration {
        guard value.isFinite else { return value > 0 ? .microseconds(Int64.max) : .zero }
        let micros = (value * 1000).rounded()
        if micros >= 9.2e18 { return .microseconds(Int64.max) }
        if micros <= -9.2e18 { return .microseconds(Int64.min) }
        return .microseconds(Int64(micros))
    }
}
