import CWallClock
import RichPush

/// The wall clock a shard's start is measured on: `CLOCK_REALTIME`, with what the kernel knows of its
/// synchronization (its NTP state), read together.
///
/// Shards on separate machines agree on a moment only as well as their clocks agree: the kernel's
/// maximum error (`maxerror`, which grows while no time server corrects it) bounds how far this
/// clock may be from true time, so a report keeps it beside the lateness it measured.
///
/// ```swift
/// let reading = WallClock.read()
/// reading.time.rfc3339, reading.synchronized, reading.maxError
/// ```
package enum WallClock {
    /// The clock's name, as reports record it.
    package static let name = "CLOCK_REALTIME"

    /// One reading: the time, and the kernel's word on the clock's accuracy.
    package struct Reading: Sendable, Equatable {
        package var time: WallTime
        /// Whether the kernel's NTP state says the clock is synchronized; nil when it cannot be read.
        package var synchronized: Bool?
        /// The kernel's maximum and estimated error of the clock; nil when unknown.
        package var maxError: Duration?
        package var estimatedError: Duration?

        package init(time: WallTime, synchronized: Bool?, maxError: Duration?, estimatedError: Duration?) {
            self.time = time
            self.synchronized = synchronized
            self.maxError = maxError
            self.estimatedError = estimatedError
        }
    }

    /// Reads the clock now.
    package static func read() -> Reading {
        var reading = richpush_wall_clock_reading()
        guard richpush_wall_clock_read(&reading) == 0 else {
            // CLOCK_REALTIME cannot fail on Linux with a valid pointer; the state is unknown then.
            return Reading(time: WallTime(nanoseconds: 0), synchronized: nil, maxError: nil, estimatedError: nil)
        }
        func microseconds(_ value: Int64) -> Duration? { value < 0 ? nil : .microseconds(value) }
        return Reading(
            time: WallTime(nanoseconds: reading.seconds &* 1_000_000_000 &+ reading.nanoseconds),
            synchronized: reading.synchronized < 0 ? nil : reading.synchronized == 1,
            maxError: microseconds(reading.max_error_microseconds),
            estimatedError: microseconds(reading.estimated_error_microseconds))
    }
}
