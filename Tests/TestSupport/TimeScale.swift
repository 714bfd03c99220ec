import Foundation

/// How much slower than an idle machine the one running the suite is: the one knob for the few time
/// bounds a test cannot write another way.
///
/// `RICHPUSH_TIME_SCALE` sets it: a number of at least 1 (1 means an idle machine; a value that is not
/// a finite number of at least 1 is ignored, and one over 100 is taken as 100). `scripts/test` sets it
/// from a quick calibration of the machine: how much CPU time a short busy loop gets against the wall
/// time it takes, so a build running beside the suite widens the bounds in proportion. Under a
/// sanitizer (``Sanitizer``), which runs the code several times slower, the factor is three times that.
///
/// Tests prefer not to need it. A deadline, a start time or a display time is checked by the order of
/// events (the command returned before the server's delayed answer was due; the wait ended before a
/// sleeper due later woke up) or against what the same test measured (the same run without the call
/// under test); a budget that must not run out is generous (60 s); a lower bound (a wait lasted at
/// least its length) needs nothing, as load only makes things slower. What is left, a bound with no
/// event to compare with, is scaled here. A budget that must run out against a server's delay keeps its
/// ratio to the delay: both are scaled, or neither.
package enum TimeScale {
    /// `RICHPUSH_TIME_SCALE` (1 when unset or unusable, at most 100), times 3 under a sanitizer.
    package static let factor: Double = {
        let text = ProcessInfo.processInfo.environment["RICHPUSH_TIME_SCALE"] ?? ""
        let given = Double(text.trimmingCharacters(in: .whitespaces)) ?? 1
        let machine = given.isFinite && given >= 1 ? min(given, 100) : 1
        return Sanitizer.isActive ? machine * 3 : machine
    }()

    /// `bound` stretched by ``factor``.
    package static func scaled(_ bound: Duration) -> Duration {
        bound * factor
    }

    /// A whole number (the seconds of a command-line `--budget`, the minutes of a time limit) stretched
    /// by ``factor``, rounded up.
    package static func scaled(_ whole: Int) -> Int {
        Int((Double(whole) * factor).rounded(.up))
    }
}
