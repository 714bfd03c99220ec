import RichPush

/// A moment on the wall clock (UTC), to the nanosecond: what `--start-at` names and what a report
/// records of when each shard began.
///
/// It reads RFC 3339 (`2026-12-01T18:00:00Z`, `2026-12-01T19:00:00.250+01:00`; `t`, `z` and a space
/// between date and time are accepted, as RFC 3339 allows) or seconds since the Unix epoch
/// (`1796148000`, `1796148000.25`), and writes RFC 3339 in UTC with milliseconds.
///
/// ```swift
/// let start = try WallTime(parsing: "2026-12-01T18:00:00Z")
/// start.rfc3339   // "2026-12-01T18:00:00.000Z"
/// ```
package struct WallTime: Sendable, Equatable, Comparable, Hashable {
    /// Nanoseconds since 1970-01-01T00:00:00Z.
    package var nanoseconds: Int64

    package init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// The earliest and latest years read: a time before 1970 is no start time, and nanoseconds since
    /// the epoch fit an Int64 until 2262.
    static let years = 1970...2261

    /// Reads RFC 3339 or epoch seconds; anything else is an `invalid-value` of `--start-at` with an example.
    package init(parsing text: String) throws(ConfigurationError) {
        let trimmed = text.trimmingWhitespace
        if let epoch = Self.epoch(trimmed) {
            self.init(nanoseconds: epoch)
            return
        }
        guard let parsed = Self.rfc3339(trimmed) else {
            if trimmed.allSatisfy({ $0.isNumber || $0 == "." }) && !trimmed.isEmpty {
                throw .invalid(
                    .startAt,
                    "takes seconds since the epoch (10 digits, such as 1796148000) or RFC 3339; "
                        + "'\(text.escapingControlCharacters)' is not one (milliseconds? divide by 1000)")
            }
            throw .invalid(
                .startAt,
                "takes RFC 3339 (2026-12-01T18:00:00Z, 2026-12-01T19:00:00.250+01:00) or seconds since the "
                    + "epoch (1796148000); '\(text.escapingControlCharacters)' is neither")
        }
        self.init(nanoseconds: parsed)
    }

    /// Seconds since the epoch, with a fraction.
    package var epochSeconds: Double { Double(nanoseconds) / 1e9 }

    /// RFC 3339 in UTC with milliseconds: `2026-12-01T18:00:00.000Z`.
    package var rfc3339: String {
        let (seconds, fraction) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        let (wholeSeconds, nanos) = fraction < 0 ? (seconds - 1, fraction + 1_000_000_000) : (seconds, fraction)
        let (days, secondOfDay) = Self.floorDivide(wholeSeconds, 86_400)
        let (year, month, day) = Self.civil(fromDays: days)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = nanos / 1_000_000
        let millisText = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(year)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay % 3600 / 60)):"
            + "\(two(secondOfDay % 60)).\(millisText)Z"
    }

    /// `later - earlier` as a duration.
    package static func - (later: WallTime, earlier: WallTime) -> Duration {
        .nanoseconds(later.nanoseconds &- earlier.nanoseconds)
    }

    /// This moment moved by `offset`.
    package static func + (time: WallTime, offset: Duration) -> WallTime {
        let (seconds, attoseconds) = offset.components
        return WallTime(nanoseconds: time.nanoseconds &+ seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000)
    }

    package static func < (left: WallTime, right: WallTime) -> Bool { left.nanoseconds < right.nanoseconds }

    // MARK: Reading

    /// `1796148000` or `1796148000.25`: digits, an optional fraction of up to 9 digits.
    private static func epoch(_ text: String) -> Int64? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.count <= 10, whole.allSatisfy(\.isASCIIDigit),
            let seconds = Int64(whole)
        else { return nil }
        var nanos: Int64 = 0
        if parts.count == 2 {
            guard let digits = fractionNanoseconds(parts[1]) else { return nil }
            nanos = digits
        }
        // 10 digits reach the year 2286, within Int64 nanoseconds; the window check refuses a far one
        // with the numbers, and a 13-digit millisecond count is not a time at all.
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, carry) = scaled.addingReportingOverflow(nanos)
        return overflow || carry ? nil : sum
    }

    /// The nanoseconds of 1 to 9 fraction digits (more digits are cut, as nothing measures them).
    private static func fractionNanoseconds(_ digits: Substring) -> Int64? {
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy(\.isASCIIDigit) else { return nil }
        let kept = String(digits.prefix(9))
        let padded = kept + String(repeating: "0", count: 9 - kept.count)
        return Int64(padded)
    }

    /// `YYYY-MM-DD(T|t| )HH:MM:SS[.fraction](Z|z|+HH:MM|-HH:MM)` as nanoseconds since the epoch.
    private static func rfc3339(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20 else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        let separator = bytes[10]
        guard bytes[4] == 0x2D, bytes[7] == 0x2D, separator == 0x54 || separator == 0x74 || separator == 0x20,
            bytes[13] == 0x3A, bytes[16] == 0x3A,
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            years.contains(Int(year)), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var index = 19
        var nanos: Int64 = 0
        if bytes[index] == 0x2E {
            let start = index + 1
            index = start
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
            guard let value = fractionNanoseconds(Substring(decoding: bytes[start..<index], as: UTF8.self)) else {
                return nil
            }
            nanos = value
        }
        guard index < bytes.count else { return nil }
        var offsetSeconds: Int64 = 0
        switch bytes[index] {
        case 0x5A, 0x7A:
            guard index + 1 == bytes.count else { return nil }
        case 0x2B, 0x2D:
            guard index + 6 == bytes.count, bytes[index + 3] == 0x3A, let hours = number((index + 1)..<(index + 3)),
                let minutes = number((index + 4)..<(index + 6)), hours <= 23, minutes <= 59
            else { return nil }
            offsetSeconds = (hours * 3600 + minutes * 60) * (bytes[index] == 0x2B ? 1 : -1)
        default:
            return nil
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        let local = days * 86_400 + hour * 3600 + minute * 60 + second
        return (local - offsetSeconds) * 1_000_000_000 + nanos
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (the civil-days algorithm: eras of 400 years).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day since 1970-01-01 (the inverse of ``daysFromCivil(year:month:day:)``).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
