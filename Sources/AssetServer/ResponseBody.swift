import CAssetServerShim
import Foundation

/// The bytes of one response and the faults applied while sending them.
///
/// libmicrohttpd calls ``read(at:into:)`` on one of the server's few event-loop threads, so it never
/// sleeps: when a fault must wait (a stall, the next slice of a trickle) it suspends the connection
/// until then and returns 0 bytes; libmicrohttpd calls again after the resume. One connection's
/// calls never overlap, hence `@unchecked Sendable`.
final class ResponseBody: @unchecked Sendable {
    /// The most an endless body sends before the server gives up.
    static let endlessLimit: UInt64 = 4 << 30

    private let source: BodySource
    private let gzip: GzipStream?
    /// The body's length when known in advance (not for gzip or endless bodies).
    private let length: UInt64?
    /// Content-Length to declare; nil sends chunked.
    let declaredLength: UInt64?
    private let sendLimit: UInt64
    private let stallAt: UInt64?
    private let stallMilliseconds: Int
    private let bytesPerSecond: Int?
    private let resetOnLimit: Bool
    private let connection: OpaquePointer
    private let socket: Int32
    private let server: ServerState
    private var stalled = false
    /// Set while the connection is parked, so the next call can tell a client that left meanwhile.
    private var parked = false
    private var started: ContinuousClock.Instant?
    /// Body bytes handed to libmicrohttpd so far.
    private(set) var bytesProduced: UInt64 = 0

    /// A body over the open regular file `descriptor` (which it closes), or nil when zlib cannot
    /// allocate a compressor.
    init?(
        descriptor: Int32, fileSize: UInt64, plan: FaultPlan, connection: OpaquePointer, socket: Int32,
        server: ServerState
    ) {
        source = BodySource(
            descriptor: descriptor, fileSize: fileSize, length: plan.endless ? nil : (plan.size ?? fileSize))
        if plan.gzip {
            guard let stream = GzipStream() else {
                close(descriptor)
                return nil
            }
            gzip = stream
            length = nil
        } else {
            gzip = nil
            length = source.length
        }
        self.connection = connection
        self.socket = socket
        self.server = server
        if plan.endless || plan.chunked {
            declaredLength = nil
        } else {
            declaredLength = plan.declaredLength ?? length
        }
        var limit = length ?? Self.endlessLimit
        if let declared = declaredLength { limit = min(limit, declared) }
        if let truncateAt = plan.truncateAt { limit = min(limit, truncateAt) }
        if let resetAt = plan.resetAt { limit = min(limit, resetAt) }
        sendLimit = limit
        resetOnLimit = plan.resetAt != nil
        stallAt = plan.stallAt
        stallMilliseconds = plan.stallMilliseconds
        bytesPerSecond = plan.bytesPerSecond
    }

    deinit { close(source.descriptor) }

    /// Fills `buffer` with the bytes at `position`; returns a count (0: suspended, call again) or an
    /// MHD content-reader code.
    func read(at position: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if server.isStopping { return RP_READER_END_WITH_ERROR }
        if parked {
            parked = false
            // Resumed early because the client hung up: end here rather than send into a closed socket.
            if rp_socket_peer_gone(socket) != 0 { return RP_READER_END_WITH_ERROR }
        }
        if position >= sendLimit { return end(at: position) }
        var count = min(UInt64(buffer.count), sendLimit - position)
        if let stallAt, !stalled {
            if position >= stallAt {
                stalled = true
                return wait(until: .now + .milliseconds(stallMilliseconds))
            }
            count = min(count, stallAt - position)
        }
        if let rate = bytesPerSecond {
            // Send a tenth of a second's worth at a time, each when the schedule says it is due.
            let start = started ?? .now
            started = start
            count = min(count, UInt64(max(1, rate / 10)))
            let due = start + .milliseconds(Int64(clamping: position) * 1000 / Int64(rate))
            if due > .now { return wait(until: due) }
        }
        let window = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<Int(count)])
        let produced: Int
        if let gzip {
            guard position == gzip.produced, let got = gzip.produce(into: window, from: source) else {
                return RP_READER_END_WITH_ERROR
            }
            if got == 0 { return end(at: position, sourceEnded: true) }
            produced = got
        } else {
            produced = source.fill(window, at: position)
            guard produced > 0 else { return RP_READER_END_WITH_ERROR }
        }
        bytesProduced += UInt64(produced)
        return produced
    }

    /// The end of what is sent: a clean end of a chunked body, or a cut (the fault: truncated,
    /// lying length, reset).
    private func end(at position: UInt64, sourceEnded: Bool = false) -> Int {
        let complete = sourceEnded || length.map { position >= $0 } == true
        if complete && declaredLength == nil { return RP_READER_END_OF_STREAM }
        if resetOnLimit { _ = rp_socket_reset(socket) }
        return RP_READER_END_WITH_ERROR
    }

    /// Parks the connection until `deadline`: 0 bytes now, libmicrohttpd calls again after the resume.
    private func wait(until deadline: ContinuousClock.Instant) -> Int {
        guard server.suspensions.suspend(connection, socket: socket, until: deadline) else {
            return RP_READER_END_WITH_ERROR
        }
        parked = true
        return 0
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down.
    var wholeMilliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}
