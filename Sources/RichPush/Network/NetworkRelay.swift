import CNetRelay
import POSIXKit
import Synchronization

/// The shaping relay: a TCP relay on 127.0.0.1 that makes every byte pay a profile's delays and rates.
///
/// One thread runs an epoll loop over every connection (see `Sources/CNetRelay`). Each route is a
/// listener on 127.0.0.1 with a port the kernel picks, whose connections are relayed to one
/// upstream address; a fetch reaches it through a host mapping (``HostMapping``), so the URL, SNI and
/// certificate checks keep the original host and TLS stays end to end. In each direction the
/// relay paces bytes at the profile's rate, then delays them by the one-way delay plus jitter; a
/// seeded share of segments is held one retransmission timeout longer (loss); the client's first
/// bytes wait one round trip (the TCP handshake the loopback connect skipped), and the connection to
/// the upstream is opened only when that handshake would reach it, so the server sees the connection
/// and the first bytes together, as on a real network.
///
/// ```swift
/// try NetworkRelay.withRelay(profile: .named("3g")!) { relay in
///     let port = try relay.route(toHost: "127.0.0.1", port: 8443)
///     // connect to 127.0.0.1:port instead of 127.0.0.1:8443
/// }
/// ```
///
/// Memory: all connections share one buffer budget (``defaultBufferBudget``, 64 MiB, unless told
/// otherwise). Past it, or past its share of it, a connection stops reading from its sender until
/// bytes drain (TCP back-pressure; nothing is dropped); each direction may always hold one chunk
/// (``chunkBytes``), so every connection keeps moving. When the budget binds, as it does when many
/// connections run at a large delay-bandwidth product (`down=100gbit,rtt=4s`), a connection carries at
/// most its share per one-way delay and the profile's rate is not reached: the phone's TCP window
/// limits it the same way. ``Statistics/budgetWaits`` counts how often that happened.
///
/// Descriptors: the relay holds ``fixedDescriptors``, one per route (``descriptorsPerRoute``) and
/// ``descriptorsPerTransfer`` per relayed transfer, on top of the transfer's own socket.
/// ``Statistics/descriptorFailures`` counts the accepts and sockets that failed because the process
/// (or the system) ran out of descriptors.
///
/// - Warning: ``stop()`` (or the end of ``withRelay(profile:seed:bufferBudget:_:)``) closes every relayed
///   connection; stop the transfers that use it first.
package final class NetworkRelay: Sendable {
    /// The buffer memory all of a relay's connections may hold together unless told otherwise: 64 MiB.
    ///
    /// Chosen to keep a bench within its memory goal (about 250-300 MB of peak RSS for 2,000 devices
    /// in flight): the relay adds at most this, or one ``chunkBytes`` chunk per direction holding
    /// bytes when there are more of those than the budget has chunks. It still carries 64 MiB per
    /// one-way delay in all: about 1.3 GB/s at LTE's 50 ms, far more than one machine moves.
    package static let defaultBufferBudget = 64 << 20

    /// The unit of buffer memory: a direction holds whole chunks of this many bytes (16 KiB).
    package static let chunkBytes = Int(CNR_CHUNK_BYTES)

    /// Descriptors the relay itself opens per relayed transfer: the accepted connection and the one to
    /// the upstream (the transfer's own socket, to the relay, is not among them).
    package static let descriptorsPerTransfer = Int(CNR_DESCRIPTORS_PER_CONNECTION)

    /// Descriptors a running relay holds whatever it carries: its epoll set, wake-up event and timer.
    package static let fixedDescriptors = Int(CNR_FIXED_DESCRIPTORS)

    /// Descriptors each route (one per upstream target) holds: its listener.
    package static let descriptorsPerRoute = Int(CNR_DESCRIPTORS_PER_ROUTE)

    /// Counters of the relay's work so far.
    package struct Statistics: Sendable, Equatable {
        /// Connections accepted.
        package var accepted: Int
        /// Connections open now.
        package var active: Int
        /// Connections whose upstream could not be reached.
        package var upstreamFailures: Int
        /// Bytes relayed from clients to upstreams.
        package var bytesUp: Int64
        /// Bytes relayed from upstreams to clients.
        package var bytesDown: Int64
        /// Segments held back as lost.
        package var lostSegments: Int
        /// Buffer memory held now, and at most so far.
        package var bufferBytes: Int64
        package var peakBufferBytes: Int64
        /// Times a connection stopped reading because the buffer budget was spent (it resumed as bytes
        /// drained): non-zero means the budget, not the profile, set some connections' pace.
        package var budgetWaits: Int
        /// Accepts and upstream sockets that failed because the process or the system ran out of
        /// descriptors (EMFILE, ENFILE). A failed accept leaves the transfer waiting until descriptors
        /// free up (the relay retries every 100 ms); a failed upstream socket closes the transfer's
        /// connection at once, which curl reports as an empty reply or a failed TLS handshake.
        package var descriptorFailures: Int
        /// Descriptors the relay holds now.
        package var descriptors: Int
    }

    private struct State: ~Copyable {
        var relay: OpaquePointer?
        var routes: [String: UInt16] = [:]
    }

    private let state: Mutex<State>
    /// The profile every connection through this relay pays.
    package let profile: NetworkProfile
    /// The buffer memory all connections may hold together, in bytes (0: no overall cap).
    package let bufferBudget: Int

    /// Starts the relay's loop thread; `seed` fixes which segments are lost and the jitter drawn.
    ///
    /// `bufferBudget` caps the buffer memory of all connections together (see the type's summary);
    /// 0 removes the cap, leaving only each direction's own delay-bandwidth product (up to 8 MiB).
    package init(
        profile: NetworkProfile, seed: UInt64 = 1, bufferBudget: Int = NetworkRelay.defaultBufferBudget
    ) throws(NetworkError) {
        var config = cnr_config()
        config.down = Self.link(bits: profile.downBitsPerSecond, delay: profile.downDelay, profile: profile)
        config.up = Self.link(bits: profile.upBitsPerSecond, delay: profile.upDelay, profile: profile)
        config.handshake_ns = Self.nanoseconds(profile.roundTrip)
        config.seed = seed
        config.segment_bytes = 0
        config.buffer_budget = UInt64(max(0, bufferBudget))
        var relay: OpaquePointer?
        let status = cnr_relay_start(&config, &relay)
        DescriptorExhaustion.note(errno: status)
        guard status == 0, let relay else {
            throw NetworkError(
                .relayFailed, SystemError(code: status, operation: "start the network relay").message)
        }
        self.profile = profile
        self.bufferBudget = max(0, bufferBudget)
        state = Mutex(State(relay: relay))
    }

    deinit { stop() }

    /// Runs `body` with a new relay and stops it when `body` ends.
    package static func withRelay<Result>(
        profile: NetworkProfile, seed: UInt64 = 1, bufferBudget: Int = NetworkRelay.defaultBufferBudget,
        _ body: (NetworkRelay) async throws -> Result
    ) async throws -> Result {
        let relay = try NetworkRelay(profile: profile, seed: seed, bufferBudget: bufferBudget)
        defer { relay.stop() }
        return try await body(relay)
    }

    /// The port on 127.0.0.1 whose connections reach `host:port` through the relay; opened once per target.
    ///
    /// `host` is resolved here (a name blocks the caller while it resolves; an address does not).
    package func route(toHost host: String, port: Int) throws(NetworkError) -> Int {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let key = "\(bare)|\(port)"
        let result: Result<Int, NetworkError> = state.withLock { state in
            if let known = state.routes[key] { return .success(Int(known)) }
            guard let relay = state.relay else {
                return .failure(NetworkError(.relayFailed, "the network relay has stopped"))
            }
            guard (1...65535).contains(port) else {
                return .failure(NetworkError(.relayFailed, "port \(port) of \(host) is out of range"))
            }
            var listening: UInt16 = 0
            let status = cnr_relay_add_route(relay, bare, UInt16(port), &listening)
            if status == -1 {
                return .failure(NetworkError(.hostUnresolved, "the network relay cannot resolve \(host)"))
            }
            guard status == 0 else {
                DescriptorExhaustion.note(errno: status)
                let failure = SystemError(code: status, operation: "open a network relay route to \(host)")
                return .failure(NetworkError(.relayFailed, failure.message))
            }
            state.routes[key] = listening
            return .success(Int(listening))
        }
        return try result.get()
    }

    /// The relay's counters now.
    package var statistics: Statistics {
        state.withLock { state in
            var stats = cnr_stats()
            if let relay = state.relay { cnr_relay_stats(relay, &stats) }
            return Statistics(
                accepted: Int(stats.accepted), active: Int(stats.active),
                upstreamFailures: Int(stats.upstream_failures),
                bytesUp: Int64(stats.bytes_up), bytesDown: Int64(stats.bytes_down),
                lostSegments: Int(stats.lost_segments), bufferBytes: Int64(stats.buffer_bytes),
                peakBufferBytes: Int64(stats.peak_buffer_bytes), budgetWaits: Int(stats.budget_waits),
                descriptorFailures: Int(stats.descriptor_failures), descriptors: Int(stats.descriptors))
        }
    }

    /// Closes every connection and listener and joins the loop thread. Idempotent.
    package func stop() {
        state.withLock { state in
            guard let relay = state.relay else { return }
            state.relay = nil
            cnr_relay_stop(relay)
        }
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    private static func link(bits: Int64, delay: Duration, profile: NetworkProfile) -> cnr_link {
        var link = cnr_link()
        link.bits_per_second = UInt64(max(0, bits))
        link.delay_ns = nanoseconds(delay)
        link.jitter_ns = nanoseconds(profile.jitter)
        link.loss_ppm = UInt32(min(999_999, max(0, (profile.loss * 1_000_000).rounded())))
        link.stall_ns = nanoseconds(profile.retransmissionTimeout)
        return link
    }
}
