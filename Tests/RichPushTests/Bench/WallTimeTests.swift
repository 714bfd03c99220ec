import RichPush
import RichPushRuns
import TestSupport
import Testing

/// `--start-at` values: RFC 3339 and epoch seconds read to the nanosecond, written back in UTC, and
/// everything else refused with an example.
@Suite struct WallTimeTests {
    init() { useCommandLineSpelling() }

    /// The same moment in every spelling the option takes (2026-12-01T18:00:00Z is 1796148000 seconds
    /// after the epoch: 20,788 days and 18 hours).
    @Test(arguments: [
        "2026-12-01T18:00:00Z", "2026-12-01t18:00:00z", "2026-12-01 18:00:00Z", "2026-12-01T19:00:00+01:00",
        "2026-12-01T12:30:00-05:30", "1796148000", "1796148000.000", " 1796148000 ", "2026-12-01T18:00:00.000000000Z",
    ])
    func readsOneMomentInEverySpelling(_ text: String) throws {
        #expect(try WallTime(parsing: text).nanoseconds == 1_796_148_000 * 1_000_000_000)
    }

    @Test func keepsFractionsAndWritesRFC3339InUTC() throws {
        let time = try WallTime(parsing: "2026-12-01T19:00:00.250+01:00")
        #expect(time.nanoseconds == 1_796_148_000_250_000_000)
        #expect(time.rfc3339 == "2026-12-01T18:00:00.250Z")
        #expect(try WallTime(parsing: "1796148000.5").rfc3339 == "2026-12-01T18:00:00.500Z")
        #expect(try WallTime(parsing: "0.000000001").nanoseconds == 1)
        // The largest values read stay inside Int64 nanoseconds.
        #expect(try WallTime(parsing: "9000000000.999999999").nanoseconds == 9_000_000_000_999_999_999)
        #expect(try WallTime(parsing: "2261-12-31T23:59:59.999Z").rfc3339 == "2261-12-31T23:59:59.999Z")
        // Leap days and the ends of months and years come back as written.
        for text in ["2028-02-29T23:59:59.999Z", "2026-12-31T23:59:59.000Z", "1970-01-01T00:00:00.000Z"] {
            #expect(try WallTime(parsing: text).rfc3339 == text)
        }
        #expect(
            try WallTime(parsing: "2027-01-01T00:00:00Z") - WallTime(parsing: "2026-12-31T23:59:59Z") == .seconds(1))
        #expect((try WallTime(parsing: "1796148000")) + .milliseconds(1500) == (try WallTime(parsing: "1796148001.5")))
    }

    /// Malformed values name the option and show what it takes; a millisecond count is called one.
    @Test(arguments: [
        "", "now", "2026-12-01", "2026-12-01T18:00:00", "2026-13-01T18:00:00Z", "2026-02-29T18:00:00Z",
        "2026-12-01T24:00:00Z", "2026-12-01T18:60:00Z", "2026-12-01T18:00:00+1:00", "2026-12-01T18:00:00.Z",
        "2026-12-01T18:00:00Zjunk", "1969-12-31T23:59:59Z", "-5", "1e9", "+30", "12:00", "2026-12-01T18:00:00+24:00",
        "9999-12-31T23:59:59Z", "2262-04-12T00:00:00Z", "99999999999", "9999999999", "17961480000000000000000",
    ])
    func refusesWhatIsNoTime(_ text: String) {
        let error = setupError { _ = try WallTime(parsing: text) }
        #expect(error?.code == .invalidValue && error?.setting == .startAt)
        #expect(error?.text.hasPrefix("--start-at takes") == true, "\(error?.text ?? "no error")")
    }

    @Test func saysAMillisecondCountIsOne() {
        let error = setupError { _ = try WallTime(parsing: "1796148000000") }
        #expect(error?.text.contains("milliseconds? divide by 1000") == true, "\(error?.text ?? "no error")")
    }
}

/// The window a shared start must fall in, and the wait for it.
@Suite struct SharedStartTests {
    init() { useCommandLineSpelling() }

    let now = WallTime(nanoseconds: 1_796_148_000 * 1_000_000_000)

    @Test func waitsForAStartAheadAndStartsAtOnceUpToAMinuteLate() throws {
        #expect(try SharedStart(now + .seconds(90)).check(now: now) == .seconds(90))
        #expect(try SharedStart(now + .seconds(86_400)).check(now: now) == .seconds(86_400))
        #expect(try SharedStart(now + .seconds(-60)).check(now: now) == .seconds(-60))
        #expect(try SharedStart(now).check(now: now) == .zero)
    }

    @Test func refusesAStartMoreThanADayAheadOrAMinutePast() {
        let ahead = setupError { _ = try SharedStart(now + .seconds(86_401)).check(now: now) }
        #expect(ahead?.code == .invalidValue && ahead?.setting == .startAt)
        #expect(
            ahead?.text
                == "--start-at 2026-12-02T18:00:01.000Z is 24.0 h ahead; a shard waits 24 h at most. Give a time "
                + "within the next day (the clock reads 2026-12-01T18:00:00.000Z)")
        let past = setupError { _ = try SharedStart(now + .seconds(-61)).check(now: now) }
        #expect(past?.code == .invalidValue)
        #expect(
            past?.text
                == "--start-at 2026-12-01T17:58:59.000Z was 1 min 1 s ago; a shard starts at most 1 min late. Give a "
                + "time ahead for every shard, such as 2026-12-01T18:02:00.000Z (the clock reads "
                + "2026-12-01T18:00:00.000Z)")
    }

    /// The wait ends at the start on the wall clock: not before it, and before a sleeper due 10 s after
    /// it wakes up (a loaded machine wakes both late, but in their order; a wait that slept a whole
    /// step past the start would wake after it). A start that passed returns at once.
    @Test func waitsUntilTheStartOnTheWallClock() async throws {
        let start = WallClock.read().time + .milliseconds(300)
        let sleeper = Task { try await Task.sleep(for: .milliseconds(300) + .seconds(10)) }
        let reading = try await SharedStart(start).wait()
        sleeper.cancel()
        #expect(reading.time >= start)
        // Still asleep when the wait ended: cancelled now, its sleep throws instead of returning.
        await #expect(throws: CancellationError.self, "the sleeper due 10 s after the start woke first") {
            try await sleeper.value
        }
        let past = WallClock.read().time + .seconds(-5)
        #expect(try await SharedStart(past).wait().time >= past + .seconds(5))
    }

    @Test func aCancelledWaitThrows() async {
        let start = WallClock.read().time + .seconds(600)
        let task = Task { try await SharedStart(start).wait() }
        task.cancel()
        await #expect(throws: CancellationError.self) { _ = try await task.value }
    }

    @Test func readsTheWallClockWithItsState() {
        let first = WallClock.read()
        let second = WallClock.read()
        #expect(second.time >= first.time)
        // After 2026-01-01, before 2100: the real clock, not zero.
        #expect(first.time.epochSeconds > 1_767_225_600 && first.time.epochSeconds < 4_102_444_800)
        // The kernel reports its error in microseconds when it reports its state at all.
        if first.synchronized != nil { #expect(first.maxError != nil) }
    }
}
