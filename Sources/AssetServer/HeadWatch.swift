import CAssetServerShim
import Foundation
import Synchronization

/// Closes connections that do not deliver a request head in time (slowloris, silent clients, TLS
/// connections that never send a ClientHello), so they cannot hold the server's connection slots.
///
/// libmicrohttpd's own timeout is an idle timeout, which every trickled byte resets. This keeps a
/// real deadline per connection (``HeadDeadlines``): libmicrohttpd tells it when a connection opens
/// and closes (its connection notifications), the access handler when a head arrived, the
/// completion callback when a request ended. One thread looks for overdue connections a few times a
/// second and shuts their sockets down; libmicrohttpd then reads the end of the stream on its own
/// loop thread and closes the connection as if the client had left.
///
/// A socket is shut down under the same lock that `closed` takes, and libmicrohttpd reports a
/// connection closed before it closes the socket: a descriptor is never touched after it was
/// closed and perhaps reused for another connection.
final class HeadWatch: Sendable {
    private let deadlines: Mutex<HeadDeadlines>
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)
    /// How often the thread looks for overdue connections.
    static let interval: Duration = .milliseconds(100)

    init(firstHead: Duration, nextHead: Duration) {
        deadlines = Mutex(HeadDeadlines(firstHead: firstHead, nextHead: nextHead))
    }

    /// Starts the thread; call ``stop()`` to end it.
    func start() {
        guard !running.exchange(true, ordering: .relaxed) else { return }
        let thread = Thread { [self] in run() }
        thread.name = "richpush-serve-heads"
        thread.start()
    }

    /// Ends the thread and waits for it. Idempotent.
    func stop() {
        guard running.load(ordering: .relaxed), !stopping.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
    }

    func opened(_ connection: OpaquePointer) {
        let socket = rp_mhd_connection_fd(connection)
        guard socket >= 0 else { return }
        let now = ContinuousClock.now
        deadlines.withLock { $0.opened(UInt(bitPattern: connection), socket: socket, at: now) }
    }

    func headArrived(_ connection: OpaquePointer) {
        deadlines.withLock { $0.headArrived(UInt(bitPattern: connection)) }
    }

    func requestEnded(_ connection: OpaquePointer) {
        let now = ContinuousClock.now
        deadlines.withLock { $0.requestEnded(UInt(bitPattern: connection), at: now) }
    }

    func closed(_ connection: OpaquePointer) {
        deadlines.withLock { $0.closed(UInt(bitPattern: connection)) }
    }

    /// How many open connections owe a request head now.
    var waiting: Int { deadlines.withLock { $0.waiting } }

    private func run() {
        defer { finished.signal() }
        let (seconds, attoseconds) = Self.interval.components
        let microseconds = UInt32(seconds) * 1_000_000 + UInt32(attoseconds / 1_000_000_000_000)
        while !stopping.load(ordering: .relaxed) {
            usleep(microseconds)
            let now = ContinuousClock.now
            deadlines.withLock { deadlines in
                for socket in deadlines.expire(at: now) { _ = shutdown(socket, Int32(SHUT_RDWR)) }
            }
        }
    }
}

/// libmicrohttpd's connection notification: a connection was accepted, or is being closed.
func notifyConnection(
    _ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ event: MHD_ConnectionNotificationCode
) {
    guard let context, let connection else { return }
    let state = Unmanaged<ServerState>.fromOpaque(context).takeUnretainedValue()
    switch UInt32(event.rawValue) {
    case RP_CONNECTION_STARTED: state.heads.opened(connection)
    case RP_CONNECTION_CLOSED: state.heads.closed(connection)
    default: break
    }
}
