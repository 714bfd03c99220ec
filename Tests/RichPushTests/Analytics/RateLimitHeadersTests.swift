import Foundation
import RichPush
import Testing

/// `Retry-After` and `X-RateLimit-Reset` read with checks: what the grammar allows, what is ignored,
/// what is clamped, and the three HTTP-date forms.
@Suite struct RateLimitHeadersTests {
    /// 2024-03-01T12:00:00Z.
    let now = Date(timeIntervalSince1970: 1_709_294_400)

    @Test func retryAfterDelaySecondsAreDigitsOnly() {
        #expect(RateLimitHeaders.retryAfter("120", now: now) == .seconds(120))
        #expect(RateLimitHeaders.retryAfter(" 0 ", now: now) == .zero)
        #expect(RateLimitHeaders.retryAfter("0007", now: now) == .seconds(7))
    }

    /// Each of these killed a flush with SIGILL (a Double converted to Int64 before the clamp).
    @Test(arguments: [
        "1e19", "9.3e15", "1e300", "inf", "-inf", "nan", "NaN", "-5", "+5", "1.5", "", " ", "0x10", "١٢", "12abc",
        "Infinity", "-0",
    ])
    func retryAfterThatIsNotTheGrammarIsIgnored(value: String) {
        #expect(RateLimitHeaders.retryAfter(value, now: now) == nil, "\(value)")
    }

    @Test(arguments: ["99999999999999999999999999999999", "9223372036854775808", "86401", "18446744073709551615"])
    func hugeDelaySecondsAreClampedToADay(value: String) {
        #expect(RateLimitHeaders.retryAfter(value, now: now) == .seconds(RateLimitHeaders.maximumSeconds))
    }

    @Test func retryAfterAsAnHTTPDateInEachForm() {
        // 90 s after now, in IMF-fixdate, RFC 850 and asctime.
        for value in [
            "Fri, 01 Mar 2024 12:01:30 GMT", "Friday, 01-Mar-24 12:01:30 GMT", "Fri Mar  1 12:01:30 2024",
        ] {
            #expect(RateLimitHeaders.retryAfter(value, now: now) == .seconds(90), "\(value)")
        }
        #expect(RateLimitHeaders.retryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == .zero, "in the past")
        #expect(
            RateLimitHeaders.retryAfter("Fri, 31 Dec 9999 23:59:59 GMT", now: now)
                == .seconds(RateLimitHeaders.maximumSeconds))
    }

    @Test(arguments: [
        "Fri, 30 Feb 2024 12:00:00 GMT", "Fri, 01 Mar 2024 24:00:00 GMT", "Fri, 01 Mar 2024 12:60:00 GMT",
        "Fri, 01 mar 2024 12:00:00 GMT", "Fri, 01 Mar 2024 12:00:00 UTC", "Fri, 1 Mar 2024 12:00:00 GMT",
        "Fry, 01 Mar 2024 12:00:00 GMT", "Fri, 01 Mar 2024 12:00:00 GMT trailing", "Fri Mar 1 12:00:00 2024",
        "Friday, 01-Mar-2024 12:00:00 GMT", "Fri, 01 Mar -024 12:00:00 GMT", "Fri, 29 Feb 2023 12:00:00 GMT",
    ])
    func datesThatDoNotExistOrBreakTheGrammarAreIgnored(value: String) {
        #expect(RateLimitHeaders.epochSeconds(httpDate: value, now: now) == nil, "\(value)")
    }

    @Test func rfc850YearsMoreThanFiftyYearsAheadAreInThePastCentury() {
        let in1999 = RateLimitHeaders.epochSeconds(httpDate: "Friday, 31-Dec-99 23:59:59 GMT", now: now)
        #expect(in1999 == 946_684_799)
        let in2070 = RateLimitHeaders.epochSeconds(httpDate: "Tuesday, 01-Jan-70 00:00:00 GMT", now: now)
        #expect(in2070 == 3_155_760_000)
    }

    @Test func imfFixdateRoundTrips() {
        for epoch: Int64 in [
            0, 784_111_777, 951_782_400, 1_709_294_400, -1, -62_167_219_200, 253_402_300_799, 4_107_542_400,
        ] {
            let text = RateLimitHeaders.imfFixdate(epochSeconds: epoch)
            #expect(text != nil, "\(epoch)")
            #expect(text.flatMap { RateLimitHeaders.epochSeconds(httpDate: $0) } == epoch, "\(text ?? "")")
        }
        #expect(RateLimitHeaders.imfFixdate(epochSeconds: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(RateLimitHeaders.imfFixdate(epochSeconds: .max) == nil)
        #expect(RateLimitHeaders.imfFixdate(epochSeconds: .min) == nil)
    }

    @Test func rateLimitResetIsAnEpochSecond() {
        #expect(RateLimitHeaders.rateLimitReset("1709294430", now: now) == .seconds(30))
        #expect(RateLimitHeaders.rateLimitReset("1709294400.5", now: now) == .milliseconds(500))
        #expect(RateLimitHeaders.rateLimitReset("1709294000", now: now) == .zero, "in the past")
        #expect(
            RateLimitHeaders.rateLimitReset("99999999999999999999999", now: now)
                == .seconds(RateLimitHeaders.maximumSeconds))
        for value in ["1e19", "9.3e15", "1e300", "inf", "nan", "-1709294430", "1709294430.", ".5", "17092944x0"] {
            #expect(RateLimitHeaders.rateLimitReset(value, now: now) == nil, "\(value)")
        }
    }
}
