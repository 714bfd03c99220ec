import CAssetServerShim
import Foundation
import POSIXKit
import Synchronization

/// Connections parked while a fault waits (delay, stall, trickle), and the one thread that resumes them.
///
/// The event loops run on a small fixed pool of threads, so a fault must never sleep on one: the
/// handler suspends its connection (``suspend(_:socket:until:)``) and returns; this thread resumes
/// it when its deadline passes, or early when the client hangs up (libmicrohttpd does not watch a
/// suspended socket), so an abandoned 10-minute stall does not hold its descriptor.
///
/// - Warning: libmicrohttpd must not be stopped with a connection suspended: ``stop()`` refuses
///   new suspensions and resumes every parked connection first.
final class Suspensions: @unchecked Sendable {
    private struct Parked: @unchecked Sendable {  // The pointer is only handed back to libmicrohttpd.
        var connection: OpaquePointer
        var socket: Int32
        var deadline: ContinuousClock.Instant
    }

    private struct State {
        var parked: [Parked] = []
        var stopping = false
    }

    private let state = Mutex(State())
    /// A pipe that wakes the thread when a connection is parked or the server stops.
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let finished = DispatchSemaphore(value: 0)

    init() throws(AssetServerError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw AssetServerError.start(SystemError.current("create the server's wake-up pipe"))
        }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        let thread = Thread { [self] in run() }
        thread.name = "richpush-serve-timer"
        thread.start()
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    /// How many connections are parked now.
    var count: Int { state.withLock { $0.parked.count } }

    /// Suspends `connection` until `deadline`; false (and nothing suspended) when the server is stopping.
    ///
    /// Call only from libmicrohttpd's access handler or content reader of that connection, then return
    /// at once (the reader returns 0 bytes); libmicrohttpd calls again after the resume.
    func suspend(_ connection: OpaquePointer, socket: Int32, until deadline: ContinuousClock.Instant) -> Bool {
        let parked = state.withLock { state in
            guard !state.stopping else { return false }
            // Suspended before it is listed, so the timer thread can never resume it too early.
            MHD_suspend_connection(connection)
            state.parked.append(Parked(connection: connection, socket: socket, deadline: deadline))
            return true
        }
        if parked { wake() }
        return parked
    }

    /// Refuses new suspensions, resumes every parked connection and ends the thread. Idempotent.
    func stop() {
        let (parked, first) = state.withLock { state in
            defer {
                state.stopping = true
                state.parked.removeAll()
            }
            return (state.parked, !state.stopping)
        }
        for entry in parked { MHD_resume_connection(entry.connection) }
        guard first else { return }
        wake()
        finished.wait()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    private func run() {
        defer { finished.signal() }
        var drain = [UInt8](repeating: 0, count: 64)
        while true {
            let (stopping, sockets, nextDeadline) = state.withLock { state in
                (state.stopping, state.parked.map(\.socket), state.parked.map(\.deadline).min())
            }
            if stopping { return }
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            fds += sockets.map { pollfd(fd: $0, events: RP_POLLRDHUP, revents: 0) }
            var timeout: Int32 = 1000
            if let nextDeadline {
                let wait = max(0, (nextDeadline - .now).wholeMilliseconds + 1)
                timeout = Int32(min(wait, 1000))
            }
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready > 0, fds[0].revents != 0 {
                while read(wakeRead, &drain, drain.count) > 0 {}
            }
            var hungUp = Set<Int32>()
            if ready > 0 {
                for entry in fds.dropFirst() where entry.revents != 0 { hungUp.insert(entry.fd) }
            }
            let now = ContinuousClock.now
            let due = state.withLock { state in
                var due: [OpaquePointer] = []
                state.parked.removeAll { entry in
                    guard entry.deadline <= now || hungUp.contains(entry.socket) else { return false }
                    due.append(entry.connection)
                    return true
                }
                return due
            }
            for connection in due { MHD_resume_connection(connection) }
        }
    }
}
