import CAssetServerShim
import Foundation
import POSIXKit
import Synchronization

/// A certificate chain and private key, as PEM text, for the HTTPS listener.
package struct TLSIdentity: Sendable {
    package var certificatePEM: String
    package var keyPEM: String
    /// A GnuTLS priority string for the listener (`nil`: the library's default). Tests use it to stand
    /// in for an old server, for example `NORMAL:-VERS-ALL:+VERS-TLS1.1` for one that speaks TLS 1.1 only.
    package var priorities: String?

    package init(certificatePEM: String, keyPEM: String) {
        self.certificatePEM = certificatePEM
        self.keyPEM = keyPEM
    }

    /// Reads a certificate (chain) file and a key file.
    package static func load(certificate: String, key: String) throws(AssetServerError) -> TLSIdentity {
        func read(_ path: String) throws(AssetServerError) -> String {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw AssetServerError.start(
                    "cannot read '\(path)': give a PEM file (the test ones are in Samples/certs)")
            }
            return text
        }
        return TLSIdentity(certificatePEM: try read(certificate), keyPEM: try read(key))
    }
}

/// Why the asset server could not start: the one I/O error, of kind `start`.
package typealias AssetServerError = IOFailure

/// State every event-loop thread reads: the folder served, the parked connections, whether the server is stopping.
final class ServerState: Sendable {
    let root: String
    /// The served folder, opened once: every asset is opened beneath it (``openBeneath(_:path:walk:)``).
    let rootDescriptor: Int32
    let suspensions: Suspensions
    let accessLog: (@Sendable (AccessLogEntry) -> Void)?
    /// `POST /users/track`, when the server was started with it.
    let usersTrack: UsersTrackService?
    /// The request-head deadlines of every connection.
    let heads: HeadWatch
    /// The emulated CDN edge in front of the folder, in edge mode.
    let edge: EdgeCache?
    /// Whether a query parameter no fault reads is a 400 (`--strict-faults`) rather than ignored.
    let strictFaults: Bool
    private let stopping = Atomic<Bool>(false)
    private let requestCounter = Atomic<Int>(0)

    init(
        root: String, rootDescriptor: Int32, suspensions: Suspensions, heads: HeadWatch,
        accessLog: (@Sendable (AccessLogEntry) -> Void)?, usersTrack: UsersTrackService? = nil,
        edge: EdgeOptions? = nil, strictFaults: Bool = false
    ) {
        self.strictFaults = strictFaults
        self.heads = heads
        self.edge = edge.map(EdgeCache.init)
        self.usersTrack = usersTrack
        self.root = root
        self.rootDescriptor = rootDescriptor
        self.suspensions = suspensions
        self.accessLog = accessLog
    }

    deinit { close(rootDescriptor) }

    var isStopping: Bool { stopping.load(ordering: .relaxed) }
    func beginStopping() { stopping.store(true, ordering: .relaxed) }
    /// Counts a request and returns its 1-based sequence number.
    func countRequest() -> Int { requestCounter.wrappingAdd(1, ordering: .relaxed).newValue }
    var requests: Int { requestCounter.load(ordering: .relaxed) }
}

/// The embedded asset server: serves a folder over HTTP and HTTPS on 127.0.0.1, with fault modes.
///
/// Built on GNU libmicrohttpd with internal event loops (epoll for HTTP, poll for HTTPS) on a fixed
/// pool of threads (one per core per listener), so thousands of connections cost descriptors, not
/// threads. A fault that waits
/// (delay, stall, trickle) suspends its connection instead of sleeping on a loop thread, so it
/// slows only its own response. Faults are chosen per request by query parameters, listed in
/// ``FaultPlan``.
///
/// ```swift
/// let server = try AssetServer(root: "Samples/assets", tls: identity)
/// defer { server.stop() }
/// print(server.httpsBaseURL!)   // https://127.0.0.1:40123
/// ```
package final class AssetServer: Sendable {
    /// The port of the plain HTTP listener.
    package let httpPort: UInt16
    /// The port of the HTTPS listener, when TLS was configured.
    package let httpsPort: UInt16?
    /// The address both listeners are bound to.
    package let host: String
    /// The most connections each listener holds at once (the rest wait in the listen queue).
    package let connectionLimit: Int
    /// The most connections each listener holds from one address; more are closed as they are
    /// accepted. Below ``connectionLimit``, so other clients always find a free slot.
    package let perAddressLimit: Int
    /// How long a new connection has to finish its TLS handshake and send a whole request head.
    package let headTimeout: Duration

    private let state: ServerState
    private let daemons: Mutex<[OpaquePointer]>

    /// `http://HOST:PORT`.
    package var httpBaseURL: String { "http://\(host):\(httpPort)" }
    /// `https://HOST:PORT`, when TLS was configured.
    package var httpsBaseURL: String? { httpsPort.map { "https://\(host):\($0)" } }
    /// Requests answered since the server started.
    package var requestCount: Int { state.requests }

    /// Starts serving `root`; port 0 picks a free port. HTTPS listens only when `tls` is given.
    ///
    /// - Parameters:
    ///   - connectionLimit: the most connections per listener; lowered so that connections and the
    ///     files they send always fit under the process's descriptor limit, leaving room for the rest
    ///     of the process.
    ///   - threads: event-loop threads per listener (default: one per core).
    ///   - perAddressLimit: the most connections per listener from one IPv4 address (default: the
    ///     connection limit less an eighth, at least one slot, kept for other addresses); at most the
    ///     connection limit.
    ///   - headTimeout: a new connection that has not finished its TLS handshake and sent a whole
    ///     request head (request line and headers) this long after it was accepted is closed, however
    ///     it trickles; a later request on a kept-alive connection has `idleTimeout` from the end of
    ///     the previous one.
    ///   - idleTimeout: a connection with no traffic for this long is closed (faults that wait on
    ///     purpose do not count as idle).
    ///   - accessLog: called once per finished request, on a server thread.
    ///   - usersTrack: also answer `POST /users/track` like Braze's REST API (see ``UsersTrackOptions``).
    ///   - strictFaults: answer a query parameter no fault reads with a 400 (by default it is ignored,
    ///     as a CDN ignores cache busters and `utm_*` tags, and the access log notes it).
    package init(
        root: String, tls: TLSIdentity? = nil, host: String = "127.0.0.1", httpPort: UInt16 = 0,
        httpsPort: UInt16 = 0, connectionLimit: Int = 4096, perAddressLimit: Int? = nil, threads: Int? = nil,
        headTimeout: Duration = AssetServer.defaultHeadTimeout, idleTimeout: Duration = .seconds(30),
        accessLog: (@Sendable (AccessLogEntry) -> Void)? = nil,
        usersTrack: UsersTrackOptions? = nil, edge: EdgeOptions? = nil, strictFaults: Bool = false
    ) throws(AssetServerError) {
        let trackService = try usersTrack.map { options throws(AssetServerError) in try UsersTrackService(options) }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue,
            let resolved = realpath(root, nil)
        else {
            throw AssetServerError.start("'\(root)' is not a folder: give the folder of assets to serve")
        }
        let canonicalRoot = String(cString: resolved)
        free(resolved)
        let rootDescriptor: Int32
        do {
            rootDescriptor = try SystemCall.open(canonicalRoot, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        } catch {
            throw AssetServerError.start(SystemError(code: error.code, operation: "open", path: root))
        }
        let suspensions: Suspensions
        do {
            suspensions = try Suspensions()
        } catch {
            close(rootDescriptor)
            throw error
        }
        let heads = HeadWatch(firstHead: max(.milliseconds(100), headTimeout), nextHead: max(.seconds(1), idleTimeout))
        state = ServerState(
            root: canonicalRoot, rootDescriptor: rootDescriptor, suspensions: suspensions, heads: heads,
            accessLog: accessLog, usersTrack: trackService, edge: edge, strictFaults: strictFaults)
        self.host = host
        let listeners = tls == nil ? 1 : 2
        let limit = Self.fittingLimit(connectionLimit, listeners: listeners)
        self.connectionLimit = limit
        let perAddress = perAddressLimit.map { min(limit, max(1, $0)) } ?? Self.defaultPerAddressLimit(limit)
        self.perAddressLimit = perAddress
        self.headTimeout = max(.milliseconds(100), headTimeout)
        heads.start()
        let poolSize = UInt32(clamping: max(1, threads ?? ProcessInfo.processInfo.activeProcessorCount))
        let timeout = UInt32(clamping: max(1, idleTimeout.components.seconds))
        // The server keeps `state` alive; stop() joins every thread that could read it first.
        let context = Unmanaged.passUnretained(state).toOpaque()
        func start(port: UInt16, identity: TLSIdentity?) -> OpaquePointer? {
            let host = host
            return host.withCString { address in
                withOptionalCString(identity?.keyPEM) { key in
                    withOptionalCString(identity?.certificatePEM) { certificate in
                        withOptionalCString(identity?.priorities) { priorities in
                            var config = rp_mhd_config(
                                ipv4: address, port: port, handler: handleRequest, uri_logger: recordRequest,
                                completed: finishRequest, context: context, key_pem: key, cert_pem: certificate,
                                tls_priorities: priorities, connection_limit: UInt32(clamping: limit),
                                per_ip_limit: UInt32(clamping: perAddress), notify_connection: notifyConnection,
                                threads: poolSize, timeout_seconds: timeout)
                            return rp_mhd_start(&config)
                        }
                    }
                }
            }
        }
        guard let plain = start(port: httpPort, identity: nil) else {
            suspensions.stop()
            heads.stop()
            throw AssetServerError.start("cannot listen on \(host):\(httpPort) (in use, or not a local IPv4 address)")
        }
        var started = [plain]
        self.httpPort = rp_mhd_port(plain)
        if let tls {
            guard let secure = start(port: httpsPort, identity: tls) else {
                MHD_stop_daemon(plain)
                suspensions.stop()
                heads.stop()
                throw AssetServerError.start(
                    "cannot start HTTPS on \(host):\(httpsPort): port in use, or the certificate/key PEM is unusable")
            }
            started.append(secure)
            self.httpsPort = rp_mhd_port(secure)
        } else {
            self.httpsPort = nil
        }
        daemons = Mutex(started)
    }

    /// How long a new connection has, by default, for its TLS handshake and whole request head.
    ///
    /// 10 s, not less: the deadline runs from the accept, so it also covers the time a busy server
    /// takes to get to a handshake. A burst of 4,000 HTTPS devices at once from `richpush bench` on
    /// two cores had handshakes of up to 6.7 s; at 5 s, 414 of them were cut off as resets.
    package static let defaultHeadTimeout: Duration = .seconds(10)

    /// The per-address limit when none is given: the connection limit less an eighth (at least one
    /// slot), so one address, a benchmark's burst included, may take most slots but never all.
    static func defaultPerAddressLimit(_ limit: Int) -> Int {
        limit <= 1 ? 1 : limit - max(1, limit / 8)
    }

    /// `requested` lowered so that every listener's connections, each with a file open, fit under
    /// the soft descriptor limit with 64 to spare.
    static func fittingLimit(_ requested: Int, listeners: Int) -> Int {
        guard let soft = DescriptorBudget.softLimit, soft < Int(Int32.max) else { return max(1, requested) }
        let available = soft - 64
        return max(1, min(requested, available / (2 * listeners)))
    }

    /// The emulated edge's hits and misses so far (edge mode); nil without one.
    package var edgeCounts: (hits: Int, misses: Int)? { state.edge?.counts }

    /// Stops both listeners, ending waiting faults at once, and waits for every server thread. Idempotent.
    package func stop() {
        state.beginStopping()
        let running = daemons.withLock { daemons in
            defer { daemons.removeAll() }
            return daemons
        }
        guard !running.isEmpty else { return }
        // libmicrohttpd must not stop with a connection suspended: resume them all (they then end).
        state.suspensions.stop()
        for daemon in running { MHD_stop_daemon(daemon) }
        state.heads.stop()
    }

    deinit { stop() }
}

/// Calls `body` with `text` as a C string, or with nil when there is no text.
private func withOptionalCString<Result>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> Result) -> Result {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
