import AssetServer
import Foundation
import RichPush

/// `richpush serve`: the embedded asset server in the foreground.
enum ServeCommand {
    static let help = """
        Serve a folder of assets over HTTP and HTTPS on 127.0.0.1, with fault modes.

        Usage: richpush serve [DIR] [options]

        DIR defaults to Samples/assets. The URLs the server listens on are printed on stdout, one per
        line (http first, then https); everything else goes to stderr. Stop it with Ctrl-C (exit 130).
        A missing DIR, certificate or key is unusable input (exit 65); a port that cannot be bound
        is exit 69.

        Options:
          --port N           HTTP port (default 0: any free port).
          --https-port N     HTTPS port (default 0: any free port).
          --cert FILE        Certificate chain (PEM) for HTTPS (default Samples/certs/server.pem).
          --key FILE         Private key (PEM) for HTTPS (default Samples/certs/server-key.pem).
          --no-tls           Serve plain HTTP only.
          --host ADDRESS     IPv4 address to bind (default 127.0.0.1).
          --access-log       Print one line per request on stderr: method, target, status, body bytes, ms.
          --api-key-file F   Also answer POST /users/track like Braze's REST API, for this key (read from F).
          --track-log FILE   Append every object /users/track accepted to FILE, one JSON line each.
          --track-limit N[/S] Requests /users/track accepts per S-second window (default 20/1); more get 429.

        Fault modes are query parameters, so a payload URL alone can ask for one:
          delay=MS        wait before the status line      status=CODE     answer with that HTTP status
          redirect=N      N redirects, then the asset      to=URL          one redirect to URL (any scheme)
          type=MIME       force the Content-Type           gzip=1          gzip the body (Content-Encoding)
          size=BYTES      body of exactly BYTES (padded)   chunked=1       no Content-Length
          endless=1       a body that never ends           truncate=BYTES  send BYTES, then close
          length=BYTES    declare this Content-Length      stall=BYTES     go silent after BYTES (stall-ms=MS)
          rate=BPS        trickle at BPS bytes/second      reset=BYTES     TCP reset after BYTES (0: at once)
          every=K         apply the faults to every K-th request only (for a bench: a share of bad responses)
        An unknown parameter is answered 400 with the list above; n=, v=, id=, tag=, shared= and names
        starting with _ are tags that only make a URL distinct, and are ignored.

        Example:
          richpush serve Samples/assets --port 8080
          curl --cacert Samples/certs/ca.pem -o /dev/null -w '%{http_code} %{size_download}\\n' \\
               'https://127.0.0.1:<https-port>/hero.jpg?truncate=1000'
        """

    static func run(_ arguments: Arguments) throws -> ExitCode {
        var arguments = arguments
        let httpPort: UInt16 = try arguments.number("--port", in: 0...65535) ?? 0
        let httpsPort: UInt16 = try arguments.number("--https-port", in: 0...65535) ?? 0
        let noTLS = arguments.flag("--no-tls")
        let accessLog = arguments.flag("--access-log")
        let host = try arguments.value("--host") ?? "127.0.0.1"
        var certificate = try arguments.value("--cert")
        var key = try arguments.value("--key")
        let usersTrack = try usersTrackOptions(&arguments)
        let positionals = try arguments.positionals()
        guard positionals.count <= 1 else { throw UsageError("serve takes one folder, got \(positionals.count)") }
        let samples = SamplesFolder.locate()
        guard let root = positionals.first ?? samples.map({ $0 + "/assets" }) else {
            throw UsageError("no folder given and no Samples/assets here: run 'richpush serve DIR'")
        }
        try requireFolder(root)
        if !noTLS, certificate == nil, key == nil, let samples {
            certificate = samples + "/certs/server.pem"
            key = samples + "/certs/server-key.pem"
        }
        var identity: TLSIdentity?
        if !noTLS {
            switch (certificate, key) {
            case (let certificate?, let key?):
                do { identity = try TLSIdentity.load(certificate: certificate, key: key) } catch {
                    throw CommandFailure(.dataError, error.message)
                }
            case (_?, nil):
                throw UsageError("--cert needs --key (the private key of that certificate), or pass --no-tls")
            case (nil, _?):
                throw UsageError("--key needs --cert (the certificate chain for that key), or pass --no-tls")
            case (nil, nil):
                throw UsageError("HTTPS needs --cert FILE and --key FILE (no Samples/certs here), or pass --no-tls")
            }
        }
        raiseDescriptorLimit()
        var logger: (@Sendable (AccessLogEntry) -> Void)?
        if accessLog {
            logger = { (entry: AccessLogEntry) in writeAccessLine(entry.line) }
        }
        let server: AssetServer
        do {
            server = try AssetServer(
                root: root, tls: identity, host: host, httpPort: httpPort, httpsPort: httpsPort, accessLog: logger,
                usersTrack: usersTrack)
        } catch {
            throw CommandFailure(.unavailable, "the server could not start: \(error.message)")
        }
        printLine(server.httpBaseURL + "/")
        if let https = server.httpsBaseURL { printLine(https + "/") }
        printError("richpush: serving \(root)")
        if identity != nil, let samples, certificate == samples + "/certs/server.pem" {
            printError("richpush: HTTPS uses the test certificate; trust it with --cacert \(samples)/certs/ca.pem")
        }
        if usersTrack != nil { printError("richpush: POST /users/track answers like Braze's REST API") }
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
}

/// Stops with exit 65 unless `path` is a folder: the input a server or a bench serves.
func requireFolder(_ path: String) throws {
    var info = stat()
    guard stat(path, &info) == 0 else {
        throw CommandFailure(
            .dataError, "'\(path.escapingControlCharacters)' does not exist: give the folder of assets to serve")
    }
    guard (info.st_mode & S_IFMT) == S_IFDIR else {
        throw CommandFailure(
            .dataError, "'\(path.escapingControlCharacters)' is not a folder: give the folder of assets to serve")
    }
}

/// Reads `--api-key-file`, `--track-log` and `--track-limit`; `nil` when /users/track is not served.
private func usersTrackOptions(_ arguments: inout Arguments) throws -> UsersTrackOptions? {
    let keyFile = try arguments.value("--api-key-file")
    let log = try arguments.value("--track-log")
    let limit = try arguments.value("--track-limit")
    guard let keyFile else {
        if log != nil || limit != nil { throw UsageError("--track-log and --track-limit need --api-key-file") }
        return nil
    }
    guard let data = FileManager.default.contents(atPath: keyFile),
        let key = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !key.isEmpty
    else {
        throw UsageError("--api-key-file \(keyFile): no readable file with a key there")
    }
    var options = UsersTrackOptions(apiKey: key, logPath: log)
    if let limit {
        let parts = limit.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let count = Int(parts[0]), count > 0,
            let seconds = parts.count == 2 ? Int(parts[1]) : 1, (1...3600).contains(seconds)
        else {
            throw UsageError("--track-limit takes N or N/SECONDS (for example 3000/3), not '\(limit)'")
        }
        options.limit = count
        options.windowSeconds = seconds
    }
    return options
}

/// Raises the soft limit on open descriptors to the hard limit, so the server's connection limit
/// (which fits under the soft limit) is not a few hundred on a default `ulimit -n`.
private func raiseDescriptorLimit() {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

/// Writes one access-log line to stderr with a single write(2): lines from the server's threads never
/// interleave, and a failing stderr drops the line instead of ending the server.
private func writeAccessLine(_ line: String) {
    let bytes = Array(("richpush: " + line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
