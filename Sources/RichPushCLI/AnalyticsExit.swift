import RichPush
import RichPushServices

/// The exit codes of `richpush analytics record|show|flush`, from the one table every command
/// shares (``ExitCode``; the README's "What richpush decides"): the only place they are decided.
///
/// | result | exit |
/// |---|---|
/// | done: recorded, shown without a defect, everything delivered | 0 |
/// | `show` found a defect in a suite it could read; `flush` left items pending or rejected | 1 |
/// | an unusable option or API key | 64 |
/// | a missing App Group or suite, a suite or outbox that is not one (garbage, too large) | 65 |
/// | another flush holds the suite | 69 |
/// | a file that cannot be read, written, locked or replaced (a full disk), stdout unwritable | 74 |
/// | interrupted (SIGINT, SIGTERM) | 130 |
///
/// ```swift
/// return AnalyticsExit.code(for: show.defects.isEmpty ? .done : .defectsFound)
/// ```
enum AnalyticsExit {
    /// What an analytics command came to.
    enum Result: Sendable, Equatable {
        case done
        /// `show` read the suite and found a defect.
        case defectsFound
        /// `flush` ran but left items pending, or some were rejected.
        case notDelivered
        /// The command failed with this error.
        case failed(AnalyticsError.Code)
        /// The result could not be written to stdout.
        case outputFailed
        case interrupted
    }

    /// The exit code of `result`.
    static func code(for result: Result) -> ExitCode {
        switch result {
        case .done: .success
        case .defectsFound, .notDelivered: .failure
        case .outputFailed: .ioError
        case .interrupted: .interrupted
        case .failed(let code): ExitStatus.code(for: code)
        }
    }

    /// The exit code of a flush that ran: interrupted, everything delivered, or not.
    static func code(for summary: FlushSummary, interrupted: Bool) -> ExitCode {
        code(for: interrupted ? .interrupted : summary.isComplete ? .done : .notDelivered)
    }
}
