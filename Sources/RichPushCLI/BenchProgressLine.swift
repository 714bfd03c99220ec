import Foundation
import POSIXKit
import RichPush
import RichPushRuns
import Synchronization

/// The live progress of a bench: redrawn in place on a terminal, or one line per second for a CI log.
///
/// ```swift
/// let display = BenchProgressLine(mode: .terminal)
/// let result = await session.run(progress: { display.update($0) })
/// display.finish()
/// ```
package final class BenchProgressLine: Sendable {
    private let line: ProgressLine
    private let perSecond: Bool
    private let lastLine = Mutex<(at: ContinuousClock.Instant?, final: Bool)>((nil, false))

    /// A line shown as `mode` says (``ProgressLine/Mode/log``: one line per second).
    package init(mode: ProgressLine.Mode) {
        line = ProgressLine(enabled: mode == .terminal)
        perSecond = mode == .log
    }

    /// Shows `progress` (on a terminal, at most four times a second; in a log, once a second).
    package func update(_ progress: BurstRunner.Progress) {
        let final = progress.done == progress.total
        if perSecond {
            let now = ContinuousClock.now
            let due = lastLine.withLock { last -> Bool in
                guard !last.final else { return false }
                guard final || last.at.map({ now - $0 >= .seconds(1) }) ?? (now - progress.began >= .seconds(1))
                else { return false }
                last = (now, final)
                return true
            }
            if due { try? SystemCall.writeAll(2, Array((Self.text(progress) + "\n").utf8)) }
        } else {
            line.draw(final: final) { Self.text(progress) }
        }
    }

    /// `elapsed 3.0s  done 240/1000  in flight 64 (max 64)  80/s  failed 2  ETA 9s  attached 238  fallback 2`
    package static func text(_ progress: BurstRunner.Progress) -> String {
        let elapsed = max(0.001, progress.elapsed.inSeconds)
        let counts = Verdict.allCases.compactMap { verdict in
            progress.verdicts[verdict].map { "\(verdict.rawValue) \($0)" }
        }.joined(separator: "  ")
        let eta = progress.remaining.map { String(format: "%.0fs", $0.inSeconds) } ?? "?"
        return String(
            format: "elapsed %.1fs  done %d/%d  in flight %d (max %d)  %.0f/s  failed %d  ETA %@  %@", elapsed,
            progress.done, progress.total, progress.inFlight, progress.maxInFlight, Double(progress.done) / elapsed,
            progress.failures, eta, counts)
    }

    /// Ends the line.
    package func finish() { line.finish() }
}
