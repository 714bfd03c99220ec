import RichPush

/// `--start-at`: the moment on the wall clock every shard of a run starts its schedule, so pods that
/// were started seconds apart still send one burst.
///
/// A start more than ``longestWait`` ahead, or more than ``latestLateness`` past, is refused before
/// anything starts (a typo in the date, a pod restarted long after the burst); a start up to a minute
/// past starts at once, and the report records how late (``BenchReport/ShardStart``). The wait sleeps
/// on the monotonic clock in steps of at most ``checkInterval`` and reads the wall clock between, so
/// a clock that a time server corrects during a long wait is followed.
///
/// ```swift
/// let start = SharedStart(try WallTime(parsing: "2026-12-01T18:00:00Z"))
/// let wait = try start.check(now: WallClock.read().time)   // negative: late
/// let reading = try await start.wait()                     // the wall clock as the wait ended
/// ```
package struct SharedStart: Sendable, Equatable {
    package var time: WallTime

    package init(_ time: WallTime) { self.time = time }

    /// How far past a start may be and still be run (at once, with its lateness recorded).
    package static let latestLateness: Duration = .seconds(60)
    /// How far ahead a start may be: a day.
    package static let longestWait: Duration = .seconds(86_400)
    /// The longest sleep between two readings of the wall clock.
    static let checkInterval: Duration = .seconds(30)

    /// How long from `now` to the start (negative when it has passed); a start outside the window is
    /// an `invalid-value` of `--start-at` that gives the numbers and a start that would do.
    package func check(now: WallTime) throws(ConfigurationError) -> Duration {
        let wait = time - now
        if wait > Self.longestWait {
            throw .invalid(
                .startAt,
                "\(time.rfc3339) is \(Self.describe(wait)) ahead; a shard waits \(Self.describe(Self.longestWait)) at "
                    + "most. Give a time within the next day (the clock reads \(now.rfc3339))")
        }
        if wait < .zero - Self.latestLateness {
            throw .invalid(
                .startAt,
                "\(time.rfc3339) was \(Self.describe(.zero - wait)) ago; a shard starts at most "
                    + "\(Self.describe(Self.latestLateness)) late. Give a time ahead for every shard, such as "
                    + "\((now + .seconds(120)).rfc3339) (the clock reads \(now.rfc3339))")
        }
        return wait
    }

    /// Sleeps until the start on the wall clock and returns the clock's reading as the wait ended (at
    /// once when the start has passed); throws `CancellationError` when the task is cancelled.
    package func wait() async throws -> WallClock.Reading {
        while true {
            let reading = WallClock.read()
            let left = time - reading.time
            guard left > .zero else { return reading }
            // The last step sleeps to the moment itself; a long wait wakes up to read the clock again.
            let step = left > Self.checkInterval + .seconds(1) ? Self.checkInterval : left
            try await Task.sleep(until: ContinuousClock.now + step, tolerance: .microseconds(100), clock: .continuous)
        }
    }

    /// `2.5 s`, `3 min 20 s`, `26 h`: a duration as a message shows it.
    package static func describe(_ duration: Duration) -> String {
        let seconds = duration.inSeconds
        if seconds < 1 { return "\(Int((seconds * 1000).rounded())) ms" }
        if seconds < 60 { return "\(Double(Int(seconds * 10)) / 10) s" }
        if seconds < 3600 {
            let whole = Int(seconds)
            return whole % 60 == 0 ? "\(whole / 60) min" : "\(whole / 60) min \(whole % 60) s"
        }
        let hours = seconds / 3600
        return hours == hours.rounded() ? "\(Int(hours)) h" : "\(Double(Int(hours * 10)) / 10) h"
    }
}
