import RichPush
import RichPushServices
import Testing

@testable import RichPushCLI

/// The analytics commands' one exit table: every result and every error code, and the table's rule
/// that 1 means only "a defect found" or "not delivered".
@Suite struct AnalyticsExitTests {
    @Test(arguments: [
        (AnalyticsExit.Result.done, ExitCode.success),
        (.defectsFound, .failure),
        (.notDelivered, .failure),
        (.outputFailed, .ioError),
        (.interrupted, .interrupted),
        (.failed(.suiteNotFound), .dataError),
        (.failed(.suiteUnreadable), .dataError),
        (.failed(.outboxUnreadable), .dataError),
        (.failed(.storage), .ioError),
        (.failed(.busy), .unavailable),
        (.failed(.invalidInput), .usage),
        (.failed(.apiKey), .usage),
    ])
    func eachResultHasItsCode(result: AnalyticsExit.Result, code: ExitCode) {
        #expect(AnalyticsExit.code(for: result) == code)
    }

    @Test func noErrorIsExitOne() {
        let codes: [AnalyticsError.Code] = [
            .suiteNotFound, .suiteUnreadable, .outboxUnreadable, .storage, .busy, .invalidInput, .apiKey,
        ]
        for code in codes { #expect(AnalyticsExit.code(for: .failed(code)) != .failure, "\(code)") }
    }

    @Test func aFlushSummaryIsDoneOnlyWhenEverythingWasDelivered() {
        var summary = FlushSummary()
        #expect(AnalyticsExit.code(for: summary, interrupted: false) == .success)
        #expect(AnalyticsExit.code(for: summary, interrupted: true) == .interrupted)
        summary.leftPending = 1
        #expect(AnalyticsExit.code(for: summary, interrupted: false) == .failure)
    }
}
