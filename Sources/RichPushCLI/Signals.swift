import CProcessStart
import Foundation
import POSIXKit
import RichPush
import Synchronization

/// SIGINT and SIGTERM: caught from the first instruction of `main`, turned into cancellation.
///
/// ``install()`` runs before any work. A handler (async-signal-safe: it writes one byte to a pipe)
/// replaces the default action (a signal the parent set to be ignored stays ignored), and the signals are blocked in the main thread and every thread it
/// starts, so they reach one watcher thread. The first signal marks the run interrupted and calls the
/// registered reactions (cancel the work, stop the engine); a signal that arrives before any work has
/// started is remembered, and that work is cancelled as it starts. A second signal removes the
/// process's temporary files and exits 130 at once.
enum TerminationSignal {
    /// Installs the handlers and starts the watcher thread; call once, first thing in `main`.
    static func install() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        for descriptor in fds { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        terminationSignalPipe = fds[1]
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handleTerminationSignal
        sigemptyset(&action.sa_mask)
        sigaddset(&action.sa_mask, SIGINT)
        sigaddset(&action.sa_mask, SIGTERM)
        action.sa_flags = SA_RESTART
        // A signal the parent set to be ignored stays ignored, as the C constructor leaves it: a
        // background job of a non-interactive shell, or `nohup`, is not stopped by the terminal's
        // Ctrl-C (the convention every shell and interpreter keeps).
        for number in [SIGINT, SIGTERM] where !isIgnored(number) {
            sigaction(number, &action, nil)
        }
        // A Ctrl-C before this handler existed was counted by the process's C constructor: it
        // counts now, as if it had come just now (the work has not started).
        if richpush_early_termination_signals() > 0 {
            var byte = UInt8(truncatingIfNeeded: SIGINT)
            _ = write(fds[1], &byte, 1)
        }
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGINT)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        let reader = fds[0]
        let watcher = Thread {
            var unblocked = sigset_t()
            sigemptyset(&unblocked)
            sigaddset(&unblocked, SIGINT)
            sigaddset(&unblocked, SIGTERM)
            pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
            watch(reader)
        }
        watcher.name = "richpush.signals"
        watcher.start()
    }

    /// Whether the process inherited `number` as ignored (SIG_IGN).
    private static func isIgnored(_ number: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(number, nil, &current) == 0 else { return false }
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == 1
    }

    /// Whether SIGINT or SIGTERM has arrived.
    static var received: Bool { state.withLock { $0.count > 0 } }

    /// Calls `reaction` on the first signal (at once if one already arrived); returns a token for ``remove(_:)``.
    static func onSignal(_ reaction: @escaping @Sendable () -> Void) -> Int {
        let (token, already) = state.withLock { state -> (Int, Bool) in
            state.next += 1
            if state.count == 0 { state.reactions[state.next] = reaction }
            return (state.next, state.count > 0)
        }
        if already { reaction() }
        return token
    }

    /// Makes the first signal end the process at once, exit 130, with its temporary files removed (as a
    /// second signal does), until the token is given to ``remove(_:)``: for work that has nothing to
    /// finish, reading and checking inputs (`report merge`, bench reading `--urls`), whose loops then
    /// need no checks of their own. Outputs are temporaries until committed, so nothing is left.
    static func exitOnSignal() -> Int {
        onSignal {
            TemporaryFile.removeAllLive()
            printError("richpush: interrupted.")
            _exit(ExitCode.interrupted.rawValue)
        }
    }

    /// Forgets a reaction registered by ``onSignal(_:)``.
    static func remove(_ token: Int) {
        state.withLock { _ = $0.reactions.removeValue(forKey: token) }
    }

    /// Waits for SIGINT or SIGTERM (returns at once if one already arrived).
    static func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            _ = onSignal { continuation.resume() }
        }
    }

    private struct State {
        var count = 0
        var next = 0
        var reactions: [Int: @Sendable () -> Void] = [:]
    }

    private static let state = Mutex(State())

    private static func watch(_ reader: Int32) {
        var byte: UInt8 = 0
        while true {
            guard (try? SystemCall.retrying("read", path: "the signal pipe") { read(reader, &byte, 1) }) == 1 else {
                return
            }
            let (count, reactions) = state.withLock { state in
                state.count += 1
                defer { state.reactions.removeAll() }
                return (state.count, Array(state.reactions.values))
            }
            if count == 1 {
                for reaction in reactions { reaction() }
            } else {
                TemporaryFile.removeAllLive()
                printError("richpush: interrupted again; stopped at once.")
                _exit(ExitCode.interrupted.rawValue)
            }
        }
    }
}

/// Runs `body` as a task that SIGINT or SIGTERM cancels; says whether a signal arrived.
///
/// Cancellation reaches the downloads in flight, whose temporary files are removed, so a command
/// stopped this way leaves nothing behind; it then exits 130 itself. A signal that came before the
/// call cancels the work as it starts.
func runInterruptibly<T: Sendable>(
    _ body: @escaping @Sendable () async -> T, onSignal: @escaping @Sendable () -> Void = {}
) async -> (value: T, interrupted: Bool) {
    let work = Task { await body() }
    let token = TerminationSignal.onSignal {
        work.cancel()
        onSignal()
    }
    let value = await work.value
    TerminationSignal.remove(token)
    return (value, TerminationSignal.received)
}

/// The write end of the pipe the signal handler writes to; set once, before the handler is installed.
nonisolated(unsafe) private var terminationSignalPipe: Int32 = -1

/// The signal handler: only async-signal-safe calls (one `write`), errno preserved.
private func handleTerminationSignal(_ number: Int32) {
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(terminationSignalPipe, &byte, 1)
    errno = saved
}
