import Foundation

/// The headers a rate-limited answer carries, read as numbers with every conversion checked: whatever
/// the bytes, nothing here traps.
///
/// - `Retry-After` (RFC 9110, section 10.2.3) is delay-seconds (`1*DIGIT`) or an HTTP-date: the
///   IMF-fixdate, or the obsolete RFC 850 and asctime forms a recipient must also accept.
/// - `X-RateLimit-Reset` is the epoch second at which the window ends (Braze's definition): digits,
///   optionally with a fraction.
///
/// A value that does not follow its header's grammar (a sign, an exponent, `inf`, `nan`, a date
/// that does not exist) is ignored: the reader returns nil and the caller falls back to its own
/// backoff. A value that follows the grammar but asks for longer than ``maximumSeconds`` (however
/// many digits it has) is clamped to ``maximumSeconds``; a time in the past is a wait of zero.
///
/// ```swift
/// RateLimitHeaders.retryAfter("120", now: Date())                            // 120 s
/// RateLimitHeaders.retryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now: Date())  // 0 s (past)
/// RateLimitHeaders.retryAfter("1e19", now: Date())                           // nil
/// ```
package enum RateLimitHeaders {
    /// The longest wait a header can ask for: a day. A flush caps it much lower
    /// (``FlushOptions/maxRateLimitWait``).
    package static let maximumSeconds: Int64 = 86_400

    /// The wait `Retry-After` asks for from `now`, or nil when the value is neither delay-seconds
    /// nor an HTTP-date.
    package static func retryAfter(_ value: String, now: Date) -> Duration? {
        let text = trimmed(value)
        if let seconds = digits(text[...]) { return .seconds(seconds) }
        guard let epoch = epochSeconds(httpDate: text, now: now) else { return nil }
        return wait(until: Double(epoch), now: now)
    }

    /// The wait until the epoch second `X-RateLimit-Reset` names, or nil when the value is not
    /// digits with an optional fraction.
    package static func rateLimitReset(_ value: String, now: Date) -> Duration? {
        let text = trimmed(value)
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, let seconds = digits(whole, clampedTo: maximumEpoch) else { return nil }
        var fraction = 0.0
        if parts.count == 2 {
            // At most nine places matter (nanoseconds); more digits are allowed but ignored.
            let places = parts[1].prefix(9)
            guard !parts[1].isEmpty, parts[1].allSatisfy(\.isASCIIDigit), let value = Int(places) else { return nil }
            fraction = Double(value) / pow(10, Double(places.count))
        }
        return wait(until: Double(seconds) + fraction, now: now)
    }

    /// The epoch second of an HTTP-date (IMF-fixdate, RFC 850 or asctime, always GMT), or nil when
    /// `text` is none of them or names a date that does not exist.
    ///
    /// RFC 850's two-digit year is read as RFC 9110 says: a year more than 50 years after `now` is
    /// in the century before.
    package static func epochSeconds(httpDate text: String, now: Date = Date()) -> Int64? {
        let bytes = Array(trimmed(text).utf8)
        if let comma = bytes.firstIndex(of: UInt8(ascii: ",")) {
            let dayName = String(decoding: bytes[..<comma], as: UTF8.self)
            let rest = Array(bytes[(comma + 1)...])
            if shortDays.contains(dayName) { return imfFixdate(rest) }
            if longDays.contains(dayName) { return rfc850(rest, now: now) }
            return nil
        }
        return asctime(bytes)
    }

    /// `epoch` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`); nil outside years 0 to 9999.
    package static func imfFixdate(epochSeconds epoch: Int64) -> String? {
        guard epoch >= minimumEpoch, epoch <= maximumEpoch else { return nil }
        let days = epoch >= 0 ? epoch / 86_400 : (epoch - 86_399) / 86_400
        let second = epoch - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        // 1970-01-01 was a Thursday.
        let weekday = Int(((days % 7) + 7 + 4) % 7)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(shortDays[weekday]), \(two(day)) \(months[Int(month) - 1]) \(yearText) "
            + "\(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60)) GMT"
    }

    // MARK: - Grammar

    static let shortDays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let longDays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    /// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the years four digits can write.
    static let minimumEpoch: Int64 = -62_167_219_200
    static let maximumEpoch: Int64 = 253_402_300_799

    /// `value` without the optional whitespace (SP, HTAB) around a field value, and without a CR.
    private static func trimmed(_ value: String) -> String {
        value.trimmingCharacters(in: CharacterSet(charactersIn: " \t\r\n"))
    }

    /// `1*DIGIT` as a number, clamped to `ceiling`; nil for anything else.
    private static func digits(_ text: Substring, clampedTo ceiling: Int64 = maximumSeconds) -> Int64? {
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit) else { return nil }
        var value: Int64 = 0
        for digit in text.utf8 {
            value = value * 10 + Int64(digit - UInt8(ascii: "0"))
            // Past the clamp the rest of the digits cannot bring it back: stop before any overflow.
            if value > ceiling { return ceiling }
        }
        return value
    }

    /// The wait from `now` until `epoch` (fractional seconds), zero when it is past, at most ``maximumSeconds``.
    private static func wait(until epoch: Double, now: Date) -> Duration {
        let seconds = epoch - now.timeIntervalSince1970
        guard seconds.isFinite, seconds > 0 else { return .zero }
        guard seconds < Double(maximumSeconds) else { return .seconds(maximumSeconds) }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// `SP 2DIGIT SP month SP 4DIGIT SP time SP "GMT"`, after `day-name ","`.
    private static func imfFixdate(_ bytes: [UInt8]) -> Int64? {
        var scanner = Scanner(bytes)
        guard scanner.literal(" "), let day = scanner.number(digits: 2), scanner.literal(" "),
            let month = scanner.month(), scanner.literal(" "), let year = scanner.number(digits: 4),
            scanner.literal(" "), let time = scanner.timeOfDay(), scanner.literal(" GMT"), scanner.atEnd
        else { return nil }
        return epoch(year: year, month: month, day: day, time: time)
    }

    /// `SP 2DIGIT "-" month "-" 2DIGIT SP time SP "GMT"`, after `day-name-l ","`.
    private static func rfc850(_ bytes: [UInt8], now: Date) -> Int64? {
        var scanner = Scanner(bytes)
        guard scanner.literal(" "), let day = scanner.number(digits: 2), scanner.literal("-"),
            let month = scanner.month(), scanner.literal("-"), let shortYear = scanner.number(digits: 2),
            scanner.literal(" "), let time = scanner.timeOfDay(), scanner.literal(" GMT"), scanner.atEnd
        else { return nil }
        let today = (now.timeIntervalSince1970 / 86_400).rounded(.down)
        guard today.isFinite, abs(today) < 1e8 else { return nil }
        let nowYear = civil(fromDays: Int64(today)).year
        var year = nowYear / 100 * 100 + shortYear
        if year > nowYear + 50 { year -= 100 }
        return epoch(year: year, month: month, day: day, time: time)
    }

    /// `day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time SP 4DIGIT`.
    private static func asctime(_ bytes: [UInt8]) -> Int64? {
        guard bytes.count >= 4, shortDays.contains(String(decoding: bytes[..<3], as: UTF8.self)) else { return nil }
        var scanner = Scanner(Array(bytes[3...]))
        guard scanner.literal(" "), let month = scanner.month(), scanner.literal(" ") else { return nil }
        let day: Int64
        if scanner.literal(" ") {
            guard let single = scanner.number(digits: 1) else { return nil }
            day = single
        } else {
            guard let double = scanner.number(digits: 2) else { return nil }
            day = double
        }
        guard scanner.literal(" "), let time = scanner.timeOfDay(), scanner.literal(" "),
            let year = scanner.number(digits: 4), scanner.atEnd
        else { return nil }
        return epoch(year: year, month: month, day: day, time: time)
    }

    /// The epoch second of a date and time of day, or nil when the date does not exist.
    private static func epoch(year: Int64, month: Int64, day: Int64, time: Int64) -> Int64? {
        guard (0...9999).contains(year), (1...12).contains(month), day >= 1, day <= daysIn(month, of: year) else {
            return nil
        }
        return days(year: year, month: month, day: day) * 86_400 + time
    }

    private static func daysIn(_ month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    private static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day count since 1970-01-01 (the inverse of ``days(year:month:day:)``).
    private static func civil(fromDays count: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = count + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Reads an HTTP-date's pieces from the front of its bytes.
    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { position == bytes.count }

        mutating func literal(_ text: String) -> Bool {
            let expected = Array(text.utf8)
            guard bytes.count - position >= expected.count,
                Array(bytes[position..<position + expected.count]) == expected
            else { return false }
            position += expected.count
            return true
        }

        /// Exactly `digits` ASCII digits.
        mutating func number(digits: Int) -> Int64? {
            guard bytes.count - position >= digits else { return nil }
            var value: Int64 = 0
            for byte in bytes[position..<position + digits] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            position += digits
            return value
        }

        /// A month's three letters (case-sensitive, as the grammar writes them) as 1 to 12.
        mutating func month() -> Int64? {
            guard bytes.count - position >= 3 else { return nil }
            let name = String(decoding: bytes[position..<position + 3], as: UTF8.self)
            guard let index = RateLimitHeaders.months.firstIndex(of: name) else { return nil }
            position += 3
            return Int64(index + 1)
        }

        /// `2DIGIT ":" 2DIGIT ":" 2DIGIT` as seconds into the day (a leap second 60 allowed).
        mutating func timeOfDay() -> Int64? {
            guard let hour = number(digits: 2), hour < 24, literal(":"), let minute = number(digits: 2), minute < 60,
                literal(":"), let second = number(digits: 2), second <= 60
            else { return nil }
            return hour * 3600 + minute * 60 + second
        }
    }
}

extension Character {
    /// Whether this is one of the ten ASCII digits (not any Unicode digit).
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
