import CAssetServerShim
import Foundation

/// The bytes of one response and the faults applied while sending them.
///
/// libmicrohttpd calls ``read(at:into:)`` from the connection's own thread (one thread per
/// connection), so sleeping here slows this response only. Every sleep is sliced so that a
/// stopping server is never held up by more than a few milliseconds.
final class ResponseBody: @unchecked Sendable {
    enum Source {
        case file(descriptor: Int32, size: UInt64)
        case bytes([UInt8])

        var count: UInt64 {
            switch self {
            case .file(_, let size): return size
            case .bytes(let bytes): return UInt64(bytes.count)
            }
        }
    }

    /// The most an endless body sends before the server gives up.
    static let endlessLimit: UInt64 = 4 << 30

    private let source: Source
    /// The body's logical length (file plus padding), or nil for an endless body.
    let length: UInt64?
    /// Content-Length to declare; nil sends chunked.
    let declaredLength: UInt64?
    private let sendLimit: UInt64
    private let stallAt: UInt64?
    private let stallMilliseconds: Int
    private let bytesPerSecond: Int?
    private let resetOnLimit: Bool
    private let socket: Int32
    private let server: ServerState
    // Connection-thread state.
    private var stalled = false
    private var started: ContinuousClock.Instant?

    init(source: Source, plan: FaultPlan, socket: Int32, server: ServerState) {
        self.source = source
        self.socket = socket
        self.server = server
        let logical = plan.endless ? nil : (plan.size ?? source.count)
        length = logical
        if plan.endless || plan.chunked {
            declaredLength = nil
        } else {
            declaredLength = plan.declaredLength ?? logical
        }
        var limit = logical ?? Self.endlessLimit
        if let declared = declaredLength { limit = min(limit, declared) }
        if let truncateAt = plan.truncateAt { limit = min(limit, truncateAt) }
        if let resetAt = plan.resetAt { limit = min(limit, resetAt) }
        sendLimit = limit
        resetOnLimit = plan.resetAt != nil
        stallAt = plan.stallAt
        stallMilliseconds = plan.stallMilliseconds
        bytesPerSecond = plan.bytesPerSecond
    }

    deinit {
        if case .file(let descriptor, _) = source { close(descriptor) }
    }

    /// Fills `buffer` with the bytes at `position`; returns a count or an MHD content-reader code.
    func read(at position: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if server.isStopping { return RP_READER_END_WITH_ERROR }
        if position >= sendLimit {
            if let length, position >= length, declaredLength == nil { return RP_READER_END_OF_STREAM }
            // Cut short on purpose: closing mid-body is the fault (truncated, lying length, reset).
            if resetOnLimit { _ = rp_socket_reset(socket) }
            return RP_READER_END_WITH_ERROR
        }
        var count = UInt64(buffer.count)
        count = min(count, sendLimit - position)
        if let stallAt, !stalled {
            if position >= stallAt {
                stalled = true
                guard sleep(milliseconds: stallMilliseconds) else { return RP_READER_END_WITH_ERROR }
            } else {
                count = min(count, stallAt - position)
            }
        }
        if let rate = bytesPerSecond {
            // Send a tenth of a second's worth at a time, each when the schedule says it is due.
            let start = started ?? .now
            started = start
            count = min(count, UInt64(max(1, rate / 10)))
            let due = start + .milliseconds(Int64(position) * 1000 / Int64(rate))
            let wait = due - ContinuousClock.now
            if wait > .zero, !sleep(milliseconds: wait.wholeMilliseconds + 1) {
                return RP_READER_END_WITH_ERROR
            }
        }
        let produced = fill(buffer, at: position, count: Int(count))
        return produced
    }

    private func fill(_ buffer: UnsafeMutableRawBufferPointer, at position: UInt64, count: Int) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        let sourceCount = source.count
        var copied = 0
        if position < sourceCount {
            let fromSource = Int(min(UInt64(count), sourceCount - position))
            switch source {
            case .file(let descriptor, _):
                let got = pread(descriptor, base, fromSource, off_t(position))
                guard got > 0 else { return RP_READER_END_WITH_ERROR }
                copied = got
            case .bytes(let bytes):
                bytes.withUnsafeBytes { all in
                    let slice = UnsafeRawBufferPointer(rebasing: all[Int(position)..<(Int(position) + fromSource)])
                    buffer.copyMemory(from: slice)
                }
                copied = fromSource
            }
        }
        if copied < count && position + UInt64(copied) >= sourceCount {
            // Padding past the end of the file (size=, endless=): zero bytes.
            (base + copied).initializeMemory(as: UInt8.self, repeating: 0, count: count - copied)
            copied = count
        }
        return copied
    }

    /// Sleeps in short slices; returns false when the server began stopping or the client left meanwhile.
    private func sleep(milliseconds: Int) -> Bool {
        pause(milliseconds: milliseconds, server: server, socket: socket)
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down.
    var wholeMilliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}

/// Sleeps in 20 ms slices on a connection's thread; false as soon as the server is stopping or the
/// client has gone (so a stalled response does not hold its thread after the client gave up).
func pause(milliseconds: Int, server: ServerState, socket: Int32) -> Bool {
    let end = ContinuousClock.now + .milliseconds(milliseconds)
    while ContinuousClock.now < end {
        if server.isStopping || rp_socket_peer_gone(socket) != 0 { return false }
        let slice = min((end - ContinuousClock.now).wholeMilliseconds, 20)
        if slice > 0 { usleep(useconds_t(slice * 1000)) }
    }
    return !server.isStopping
}
