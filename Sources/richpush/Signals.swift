import Dispatch
import Foundation

/// SIGINT and SIGTERM, turned into something async code can await.
///
/// The default actions are replaced by dispatch sources, so the process is never killed mid-write:
/// the command sees the signal, finishes cleanly and exits itself.
enum TerminationSignal {
    /// Waits for SIGINT or SIGTERM and returns its number.
    static func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            let once = Once()
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    if once.claim() { continuation.resume(returning: number) }
                }
                source.resume()
                Retained.keep(source)
            }
        }
    }

    private final class Once: @unchecked Sendable {
        private let lock = NSLock()
        private var done = false
        func claim() -> Bool {
            lock.lock()
            defer { lock.unlock() }
            defer { done = true }
            return !done
        }
    }

    /// Keeps signal sources alive for the life of the process.
    private enum Retained {
        nonisolated(unsafe) static var sources: [any DispatchSourceSignal] = []
        static func keep(_ source: any DispatchSourceSignal) { sources.append(source) }
    }
}

/// Runs `body` as a task that SIGINT or SIGTERM cancels; says whether that happened.
///
/// Cancellation reaches the downloads in flight, whose temporary files are removed, so a command
/// stopped this way leaves nothing behind; it then exits 130 itself.
func runInterruptibly<T: Sendable>(
    _ body: @escaping @Sendable () async -> T, onSignal: @escaping @Sendable () -> Void = {}
) async -> (value: T, interrupted: Bool) {
    let work = Task { await body() }
    let interrupted = Flag()
    let watcher = Task.detached {
        _ = await TerminationSignal.wait()
        interrupted.set()
        work.cancel()
        onSignal()
    }
    let value = await work.value
    watcher.cancel()
    return (value, interrupted.isSet)
}
