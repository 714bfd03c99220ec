import AssetServer
import Foundation
import POSIXKit
import RichPush
import RichPushServices

/// `richpush serve`: the embedded asset server in the foreground.
enum ServeCommand {
    // The options of this command, each declared once and read through its key.
    static let port: Key<UInt16?> = .number(
        Option("--port", "N", "HTTP port (default 0: any free port).", example: "0"), in: 0...65535)
    static let httpsPort: Key<UInt16?> = .number(
        Option("--https-port", "N", "HTTPS port (default 0: any free port).", example: "0"), in: 0...65535)
    static let certificate: Key<String?> = .text(
        Option(
            .certificate, "FILE", "Certificate chain (PEM) for HTTPS (default Samples/certs/server.pem).",
            example: "Samples/certs/server.pem"))
    static let key: Key<String?> = .text(
        Option(
            .privateKey, "FILE", "Private key (PEM) for HTTPS (default Samples/certs/server-key.pem).",
            example: "Samples/certs/server-key.pem"))
    static let noTLS: Key<Bool> = .flag(Option(.noTLS, nil, "Serve plain HTTP only."))
    static let host: Key<String?> = .text(
        Option(
            "--host", "ADDRESS", "IPv4 address to bind (default \(ServeConfiguration.defaultHost)).",
            example: "127.0.0.1"))
    static let perAddressLimit: Key<Int?> = .number(
        Option(
            "--per-ip-limit", "N",
            "Connections one client address may hold per listener (default: all but an eighth of the "
                + "connection limit, 3584 of 4096); more are closed on accept. On the default "
                + "127.0.0.1 bind, local clients usually all connect from 127.0.0.1 and share one "
                + "allowance: it protects only a client from another address (127.0.0.2, or another "
                + "machine with --host).", example: "100"), in: 1...1_000_000)
    static let headTimeout: Key<Double?> = .duration(
        Option(
            "--head-timeout", "SECONDS",
            "Seconds a new connection has for its TLS handshake and whole request head (default \(Keys.shown(AssetServer.defaultHeadTimeout, in: .seconds))); a "
                + "client that has not finished by then is closed, however it trickles.", example: "5"), in: 1...3600,
        unit: .seconds)
    static let accessLog: Key<Bool> = .flag(
        Option(
            "--access-log", nil,
            "Print one line per request on stderr: method, target, status, body bytes, ms, and the "
                + "query parameters no fault reads, which are ignored as a CDN ignores them."))
    static let strictFaults: Key<Bool> = .flag(
        Option(
            "--strict-faults", nil,
            "Answer a query parameter no fault reads (a typo such as stal=0) with a 400 that lists the "
                + "known ones, instead of ignoring it."))
    static let apiKeyFile: Key<String?> = .text(
        Option(
            .apiKeyFile, "FILE", "Also answer POST /users/track like Braze's REST API, for the key read from FILE.",
            example: "key.txt"))
    static let trackLog: Key<String?> = .text(
        Option(
            .trackLog, "FILE", "Append every object /users/track accepted to FILE, one JSON line each.",
            example: "track.ndjson"))
    static let trackLimit: Key<String?> = .text(
        Option(
            .trackLimit, "N[/S]",
            "Requests /users/track accepts per S-second window (default \(UsersTrackOptions(apiKey: "").limit)/\(UsersTrackOptions(apiKey: "").windowSeconds)); more get 429.",
            example: "3000/3"))
    static let edge: Key<Bool> = .flag(
        Option(
            .edge, nil,
            "Emulate a CDN edge in front of the folder: an LRU of request targets (path and query); a miss waits "
                + "--edge-fill, then is stored; answers carry Cache-Status (and Age on a hit)."))
    static let edgeCapacity: Key<Int?> = .number(
        Option(
            "--edge-capacity", "N",
            "Objects the edge holds, least recently used evicted (default \(EdgeOptions().capacity)).", example: "100"),
        in: 1...10_000_000)
    static let edgeFill: Key<Double?> = .duration(
        Option(
            "--edge-fill", "MS",
            "Milliseconds a miss takes to fill from the origin (default \(Keys.shown(EdgeOptions().fill, in: .milliseconds))).",
            example: "80"), in: 0...600_000, unit: .milliseconds)

    static let command = Command(
        name: "serve", synopsis: "serve [DIR]",
        summary: "Serve a folder of assets over HTTP and HTTPS on 127.0.0.1, with fault modes.",
        about: """
            Serve a folder of assets over HTTP and HTTPS on 127.0.0.1, with fault modes.

            Usage: richpush serve [DIR] [options]

            DIR defaults to Samples/assets. The URLs the server listens on are printed on stdout, one per
            line (http first, then https); everything else goes to stderr. Stop it with Ctrl-C (exit 130).

            It also answers the push SDKs' own calls as mock endpoints (--sdk-endpoint URL): POST
            /v1/track (Customer.io's delivery metric), PUT /notifications/ID/report_received
            (OneSignal's receipt) and POST /a1 (CleverTap's Notification Viewed), with the status=,
            delay=, reset= and every= faults in the URL's query.

            """ + faultModes,
        options: [
            OptionGroup(
                "Options",
                [
                    port,
                    httpsPort,
                    certificate,
                    key,
                    noTLS,
                    host,
                    perAddressLimit,
                    headTimeout,
                    accessLog,
                    strictFaults,
                    apiKeyFile,
                    trackLog,
                    trackLimit,
                ] + edgeOptions)
        ],
        footer: """
            Example:
              richpush serve Samples/assets --port 8080
              curl --cacert Samples/certs/ca.pem -o /dev/null -w '%{http_code} %{size_download}\\n' \\
                   'https://127.0.0.1:<https-port>/hero.jpg?truncate=1000'
            """,
        exitNotes: [
            .dataError: "a missing DIR, certificate or key",
            .unavailable: "a port that cannot be bound",
        ],
        run: { try run($0) })

    /// The emulated edge's options, shared with `bench --serve`.
    static let edgeOptions: [any Declared] = [
        edge,
        edgeCapacity,
        edgeFill,
    ]

    /// Reads `--edge`, `--edge-capacity` and `--edge-fill`: nil without `--edge` (a size or fill without
    /// it is a usage error).
    static func edge(_ arguments: inout Arguments) throws -> EdgeOptions? {
        let edge = try arguments.read(Self.edge)
        let capacity: Int? = try arguments.read(Self.edgeCapacity)
        let fill: Int? = try arguments.read(Self.edgeFill).map {
            Int($0.rounded())
        }
        guard edge else {
            if capacity != nil || fill != nil { throw UsageError("--edge-capacity and --edge-fill need --edge") }
            return nil
        }
        var options = EdgeOptions()
        if let capacity { options.capacity = capacity }
        if let fill { options.fill = .milliseconds(fill) }
        return options
    }

    /// The fault modes, as the help lists them.
    static let faultModes = """
        Fault modes are query parameters, so a payload URL alone can ask for one:
          delay=MS        wait before the status line      status=CODE     answer with that HTTP status
          redirect=N      N redirects, then the asset      to=URL          one redirect to URL (any scheme)
          code=3XX        the redirects' status (302)      status-body=asset  the asset as the error's body
          type=MIME       force the Content-Type           gzip=1          gzip the body (Content-Encoding)
          size=BYTES      body of exactly BYTES (padded)   chunked=1       no Content-Length
          endless=1       a body that never ends           truncate=BYTES  send BYTES, then close
          length=BYTES    declare this Content-Length      stall=BYTES     go silent after BYTES (stall-ms=MS)
          rate=BPS        trickle at BPS bytes/second      reset=BYTES     TCP reset after BYTES (0: at once)
          every=K         apply the faults to every K-th request only (for a bench: a share of bad responses)
        A parameter no fault reads (utm_source=, a cache buster, a signature) is ignored, as a CDN
        ignores it, and noted in --access-log; --strict-faults answers it 400 with the list above, except
        n=, v=, id=, tag=, shared=, filename= and names starting with _, tags that make a URL distinct.
        """

    static func run(_ arguments: Arguments) throws -> ExitCode {
        var arguments = arguments
        let httpPort = try arguments.read(Self.port)
        let httpsPort = try arguments.read(Self.httpsPort)
        let noTLS = try arguments.read(Self.noTLS)
        let accessLog = try arguments.read(Self.accessLog)
        let strictFaults = try arguments.read(Self.strictFaults)
        let host = try arguments.read(Self.host)
        let perAddressLimit: Int? = try arguments.read(Self.perAddressLimit)
        let headTimeout: Int? = try arguments.read(Self.headTimeout).map {
            Int($0.rounded(.up))
        }
        let certificate = try arguments.read(Self.certificate)
        let key = try arguments.read(Self.key)
        let usersTrack = try ServeConfiguration.UsersTrack.parse(
            keyFile: try arguments.read(Self.apiKeyFile), logPath: try arguments.read(Self.trackLog),
            limit: try arguments.read(Self.trackLimit))
        let edge = try edge(&arguments)
        let folders = try arguments.positionals()
        guard folders.count <= 1 else { throw UsageError("serve takes one folder, got \(folders.count)") }
        var configuration = try ServeConfiguration(
            folder: folders.first, samples: SamplesFolder.locate(), tls: !noTLS,
            certificate: certificate, key: key)
        if let host { configuration.host = host }
        if let httpPort { configuration.httpPort = httpPort }
        if let httpsPort { configuration.httpsPort = httpsPort }
        configuration.usersTrack = usersTrack
        configuration.perAddressLimit = perAddressLimit
        configuration.headTimeout = headTimeout.map { .seconds($0) }
        configuration.strictFaults = strictFaults
        let server = try startServer(configuration, accessLog: accessLog, edge: edge)
        printLine(server.httpBaseURL + "/")
        if let https = server.httpsBaseURL { printLine(https + "/") }
        for note in configuration.startNotes { printError("richpush: " + note) }
        if let edge {
            printError(
                "richpush: edge mode: \(edge.capacity) objects, \(Int(edge.fill / .milliseconds(1))) ms fill; answers carry Cache-Status."
            )
        }
        printError("richpush: fault modes are query parameters (see 'richpush serve --help'); Ctrl-C stops.")
        let semaphore = DispatchSemaphore(value: 0)
        Task.detached {
            _ = await TerminationSignal.wait()
            semaphore.signal()
        }
        semaphore.wait()
        server.stop()
        printError("richpush: stopped after \(server.requestCount) requests")
        return TerminationSignal.received ? .interrupted : .success
    }

    /// Loads the HTTPS identity (a file that does not load is exit 65) and starts the embedded server
    /// (one that cannot start is exit 69).
    static func startServer(_ configuration: ServeConfiguration, accessLog: Bool, edge: EdgeOptions? = nil) throws
        -> AssetServer
    {
        var identity: TLSIdentity?
        if let files = configuration.tlsFiles {
            do { identity = try TLSIdentity.load(certificate: files.certificate, key: files.key) } catch {
                throw CommandFailure(.dataError, error.message)
            }
        }
        raiseDescriptorLimit()
        var logger: (@Sendable (AccessLogEntry) -> Void)?
        if accessLog { logger = { @Sendable (entry: AccessLogEntry) in writeAccessLine(entry.line) } }
        let usersTrack = configuration.usersTrack.map { track in
            var options = UsersTrackOptions(apiKey: track.apiKey, logPath: track.logPath)
            options.limit = track.limit
            options.windowSeconds = track.windowSeconds
            return options
        }
        do {
            return try AssetServer(
                root: configuration.root, tls: identity, host: configuration.host, httpPort: configuration.httpPort,
                httpsPort: configuration.httpsPort, perAddressLimit: configuration.perAddressLimit,
                headTimeout: configuration.headTimeout ?? AssetServer.defaultHeadTimeout, accessLog: logger,
                usersTrack: usersTrack, edge: edge, strictFaults: configuration.strictFaults)
        } catch {
            throw CommandFailure(.unavailable, "the server could not start: \(error.message)")
        }
    }
}

/// Stops (unusable input, 65) unless `path` is a folder: the input a server or a bench serves.
func requireFolder(_ path: String) throws {
    try ServeConfiguration.requireFolder(path)
}

/// Raises the soft limit on open descriptors to the hard limit, so the server's connection limit
/// (which fits under the soft limit) is not a few hundred on a default `ulimit -n`.
private func raiseDescriptorLimit() {
    DescriptorBudget.raiseToHardLimit()
}

/// Writes one access-log line to stderr with a single write(2): lines from the server's threads never
/// interleave, and a failing stderr drops the line instead of ending the server.
private func writeAccessLine(_ line: String) {
    let bytes = Array(("richpush: " + line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
