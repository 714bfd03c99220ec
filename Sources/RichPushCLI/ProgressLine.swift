import Foundation
import POSIXKit
import RichPush
import RichPushRuns
import Synchronization

/// A live progress line on stderr, redrawn on a clock so it moves even when nothing completes.
///
/// On a terminal the line is redrawn in place (four times a second); in a log (`--progress` when
/// stderr is not a terminal) one line is written per second, as k6 does in CI. The text comes from
/// a closure, which reads the latest state and the clock each time.
///
/// ```swift
/// let line = ProgressLine(mode: isatty(2) == 1 ? .terminal : .off)
/// line.start { "[\(done)/\(total)] \(elapsed) s" }
/// defer { line.finish() }
/// ```
///
/// Drawing and finishing take one lock, so a tick never draws after ``finish()``.
package final class ProgressLine: Sendable {
    /// How the line is shown.
    package enum Mode: Sendable, Equatable {
        /// Not at all.
        case off
        /// Redrawn in place (`\r`, erase line).
        case terminal
        /// One whole line per second, for logs.
        case log
    }

    /// The mode for a command's flags: `--no-progress` wins; `--progress` forces log lines off a terminal.
    package static func mode(progress: Bool, noProgress: Bool, stderrIsTerminal: Bool) -> Mode {
        if noProgress { return .off }
        if stderrIsTerminal { return .terminal }
        return progress ? .log : .off
    }

    package let mode: Mode
    private let state = Mutex<(last: ContinuousClock.Instant?, drawn: Bool, finished: Bool)>((nil, false, false))
    private let ticker = Mutex<Task<Void, Never>?>(nil)

    package init(mode: Mode) { self.mode = mode }

    /// A terminal line when `enabled`, else none.
    package convenience init(enabled: Bool) { self.init(mode: enabled ? .terminal : .off) }

    /// The time between two clock ticks.
    package var interval: Duration { mode == .log ? .seconds(1) : .milliseconds(250) }

    /// Redraws `text()` on every tick of the clock until ``finish()``.
    package func start(_ text: @escaping @Sendable () -> String) {
        guard mode != .off else { return }
        let interval = self.interval
        let task = Task.detached { [self] in
            while !Task.isCancelled {
                self.draw(final: true, text)
                try? await Task.sleep(for: interval)
            }
        }
        ticker.withLock { $0 = task }
    }

    /// Draws `text()` unless the last draw was under a tick ago (a `final` state always draws).
    package func draw(final: Bool, _ text: () -> String) {
        guard mode != .off else { return }
        let now = ContinuousClock.now
        let interval = self.interval
        let terminal = mode == .terminal
        state.withLock { state in
            guard !state.finished else { return }
            guard final || state.last.map({ now - $0 >= interval }) ?? true else { return }
            state.last = now
            state.drawn = true
            let line = terminal ? "\r\u{1B}[K" + text() : text() + "\n"
            try? SystemCall.writeAll(2, Array(line.utf8))
        }
    }

    /// Stops the clock and ends the line, if one was drawn.
    package func finish() {
        ticker.withLock { task in
            task?.cancel()
            task = nil
        }
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            if mode == .terminal && state.drawn { try? SystemCall.writeAll(2, Array("\n".utf8)) }
        }
    }
}

/// The text of a batch's progress line: done/total, elapsed, rate, in flight, failures, ETA.
package struct BatchProgressText: Sendable {
    /// The line for `progress` at `now`.
    package static func line(_ progress: BatchRunner.Progress, now: ContinuousClock.Instant = .now) -> String {
        let elapsed = max(0.001, (now - progress.started).inSeconds)
        let rate = Double(progress.done) / elapsed
        let left = progress.total - progress.skipped - progress.done
        let eta = left == 0 ? "0s" : rate > 0 ? String(format: "%.0fs", Double(left) / rate) : "?"
        let failures = progress.verdicts.filter { !$0.key.showsAsIntended }.values.reduce(0, +)
        let counts = Verdict.allCases.compactMap { verdict in
            progress.verdicts[verdict].map { "\(verdict.rawValue) \($0)" }
        }.joined(separator: "  ")
        return String(
            format: "[%d/%d] %.1fs  %.1f/s  in flight %d  failed %d  ETA %@  %@", progress.done + progress.skipped,
            progress.total, elapsed, rate, progress.inFlight, failures, eta, counts)
    }
}
