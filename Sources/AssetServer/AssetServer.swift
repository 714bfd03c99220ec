import CAssetServerShim
import Foundation
import Synchronization

/// A certificate chain and private key, as PEM text, for the HTTPS listener.
public struct TLSIdentity: Sendable {
    public var certificatePEM: String
    public var keyPEM: String

    public init(certificatePEM: String, keyPEM: String) {
        self.certificatePEM = certificatePEM
        self.keyPEM = keyPEM
    }

    /// Reads a certificate (chain) file and a key file.
    public static func load(certificate: String, key: String) throws(AssetServerError) -> TLSIdentity {
        func read(_ path: String) throws(AssetServerError) -> String {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw AssetServerError(
                    "cannot read '\(path)': give a PEM file (the test ones are in Samples/certs)")
            }
            return text
        }
        return TLSIdentity(certificatePEM: try read(certificate), keyPEM: try read(key))
    }
}

/// Why the asset server could not start.
public struct AssetServerError: Error, Sendable, CustomStringConvertible {
    public var message: String

    init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// State every connection thread reads: the folder served and whether the server is stopping.
final class ServerState: Sendable {
    let root: String
    private let stopping = Atomic<Bool>(false)
    private let requestCounter = Atomic<Int>(0)

    init(root: String) { self.root = root }

    var isStopping: Bool { stopping.load(ordering: .relaxed) }
    func beginStopping() { stopping.store(true, ordering: .relaxed) }
    /// Counts a request and returns its 1-based sequence number.
    func countRequest() -> Int { requestCounter.wrappingAdd(1, ordering: .relaxed).newValue }
    var requests: Int { requestCounter.load(ordering: .relaxed) }
}

/// The embedded asset server: serves a folder over HTTP and HTTPS on 127.0.0.1, with fault modes.
///
/// Built on GNU libmicrohttpd with one thread per connection, so a fault can sleep (delay, stall,
/// trickle) without slowing other requests. Faults are chosen per request by query parameters,
/// listed in ``FaultPlan``.
///
/// ```swift
/// let server = try AssetServer(root: "Samples/assets", tls: identity)
/// defer { server.stop() }
/// print(server.httpsBaseURL!)   // https://127.0.0.1:40123
/// ```
public final class AssetServer: Sendable {
    /// The port of the plain HTTP listener.
    public let httpPort: UInt16
    /// The port of the HTTPS listener, when TLS was configured.
    public let httpsPort: UInt16?
    /// The address both listeners are bound to.
    public let host: String

    private let state: ServerState
    private let daemons: Mutex<[OpaquePointer]>

    /// `http://HOST:PORT`.
    public var httpBaseURL: String { "http://\(host):\(httpPort)" }
    /// `https://HOST:PORT`, when TLS was configured.
    public var httpsBaseURL: String? { httpsPort.map { "https://\(host):\($0)" } }
    /// Requests answered since the server started.
    public var requestCount: Int { state.requests }

    /// Starts serving `root`; port 0 picks a free port. HTTPS listens only when `tls` is given.
    public init(
        root: String, tls: TLSIdentity? = nil, host: String = "127.0.0.1", httpPort: UInt16 = 0,
        httpsPort: UInt16 = 0, connectionLimit: Int = 4096
    ) throws(AssetServerError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue,
            let resolved = realpath(root, nil)
        else {
            throw AssetServerError("'\(root)' is not a folder: give the folder of assets to serve")
        }
        let canonicalRoot = String(cString: resolved)
        free(resolved)
        state = ServerState(root: canonicalRoot)
        self.host = host
        // The server keeps `state` alive; stop() joins every thread that could read it first.
        let context = Unmanaged.passUnretained(state).toOpaque()
        let limit = UInt32(clamping: connectionLimit)
        guard let plain = rp_mhd_start(host, httpPort, handleRequest, context, nil, nil, limit) else {
            throw AssetServerError("cannot listen on \(host):\(httpPort) (in use, or not a local IPv4 address)")
        }
        var started = [plain]
        self.httpPort = rp_mhd_port(plain)
        if let tls {
            guard
                let secure = rp_mhd_start(
                    host, httpsPort, handleRequest, context, tls.keyPEM, tls.certificatePEM, limit)
            else {
                MHD_stop_daemon(plain)
                throw AssetServerError(
                    "cannot start HTTPS on \(host):\(httpsPort): port in use, or the certificate/key PEM is unusable")
            }
            started.append(secure)
            self.httpsPort = rp_mhd_port(secure)
        } else {
            self.httpsPort = nil
        }
        daemons = Mutex(started)
    }

    /// Runs `body` with a started server, and stops the server when `body` ends.
    public static func withServer<Result>(
        root: String, tls: TLSIdentity? = nil, _ body: (AssetServer) async throws -> Result
    ) async throws -> Result {
        let server = try AssetServer(root: root, tls: tls)
        defer { server.stop() }
        return try await body(server)
    }

    /// Stops both listeners, ending sleeping faults early, and waits for every connection thread. Idempotent.
    public func stop() {
        state.beginStopping()
        let running = daemons.withLock { daemons in
            defer { daemons.removeAll() }
            return daemons
        }
        guard !running.isEmpty else { return }
        for daemon in running { MHD_stop_daemon(daemon) }
    }

    deinit { stop() }
}
