import AssetServer
import Foundation
import Synchronization
import TestSupport
import Testing

/// What many, slow or large responses cost the server: threads, memory, and other clients' waits.
@Suite struct ServerResourceTests {
    /// Connections whose responses wait on purpose (stalled bodies, long delays) and connections that
    /// say nothing hold none of the server's few threads: a new client is still answered, before any of
    /// them could have freed a thread (the silent ones at the 60 s head deadline, the delayed ones after
    /// 600 s, the stalled ones never).
    @Test func stalledConnectionsLeaveRoomForAFreshClient() async throws {
        let server = try AssetServer(
            root: Fixtures.assets, threads: 2, headTimeout: .seconds(60), idleTimeout: .seconds(120))
        defer { server.stop() }
        let port = server.httpPort
        let delay = 600
        let opened = ContinuousClock.now
        let held = try await offThePool {
            var held: [RawConnection] = []
            for index in 0..<150 {
                let connection = try RawConnection(port: port)
                switch index % 3 {
                case 0: try connection.send("GET /hero.jpg?stall=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                case 1:
                    try connection.send("GET /hero.jpg?delay=\(delay * 1000) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                default: break  // Connected, silent.
                }
                held.append(connection)
            }
            // The stalled ones have their headers: the server is holding them now.
            for connection in held.enumerated().filter({ $0.offset % 3 == 0 }).map(\.element) {
                _ = connection.receive { $0.firstRange(of: [13, 10, 13, 10]) != nil }
            }
            return held
        }
        let fresh = try await offThePool { try RawHTTP.get("/hero.jpg", port: port, timeout: .seconds(50)) }
        #expect(fresh?.status == 200)
        #expect(fresh?.body == (try Fixtures.bytes(ofAsset: "hero.jpg")))
        #expect(ContinuousClock.now < opened + server.headTimeout, "answered while 150 others wait")
        let stopping = ContinuousClock.now
        server.stop()
        #expect(
            ContinuousClock.now - stopping < .seconds(delay),
            "stopping resumes and ends every waiting response instead of waiting for them")
        withExtendedLifetime(held) {}
    }

    /// Clients that connect and say nothing, up to the connection limit, lock nobody out for long:
    /// they are closed after the idle timeout (it was 120 s), and a fresh client gets in before the old
    /// timeout would have let it. The attempts stop at 100 s, not soon after the 1 s: a first attempt can
    /// wait out its own 10 s read timeout in the listen backlog, and a loaded machine adds seconds.
    @Test func silentConnectionsAtTheLimitAreDroppedAfterTheIdleTimeout() async throws {
        let server = try AssetServer(root: Fixtures.assets, connectionLimit: 20, threads: 1, idleTimeout: .seconds(1))
        defer { server.stop() }
        #expect(server.connectionLimit == 20)
        let port = server.httpPort
        let started = ContinuousClock.now
        let (held, fresh) = try await offThePool {
            let held = try (0..<20).map { _ in try RawConnection(port: port) }
            var fresh: RawResponse?
            let deadline = ContinuousClock.now + .seconds(100)
            while fresh?.status != 200 && ContinuousClock.now < deadline {
                fresh = try? RawHTTP.get("/hero.jpg", port: port)
                if fresh?.status != 200 { usleep(100_000) }
            }
            return (held, fresh)
        }
        #expect(fresh?.status == 200)
        #expect(ContinuousClock.now - started < .seconds(120), "in before the old 120 s idle timeout")
        withExtendedLifetime(held) {}
    }

    /// Hundreds of open connections (half silent, half waiting on a delayed response) add no threads
    /// to `richpush serve`; one thread per connection added 300. Measured on the built binary, so
    /// other tests' threads do not count. The silent ones get a 60 s head deadline (10 s by default), so
    /// only the 30 s idle timeout closes them: they are all open while a loaded machine accepts the 300.
    @Test func threadCountStaysBoundedWithManyConnections() async throws {
        let serve = try await ServeProcess.start(arguments: ["--head-timeout", "60"])
        defer { serve.stop() }
        let port = serve.port
        let before = try #require(serve.status("Threads"))
        let descriptorsBefore = serve.openDescriptors()
        let held = try await offThePool {
            var held: [RawConnection] = []
            for index in 0..<300 {
                let connection = try RawConnection(port: port)
                if index % 2 == 0 {
                    try connection.send("GET /hero.jpg?delay=60000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                }
                held.append(connection)
            }
            return held
        }
        // Wait until the server holds all 300 (one descriptor each), well within that idle timeout.
        let deadline = ContinuousClock.now + .seconds(20)
        while serve.openDescriptors() - descriptorsBefore < 300 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let during = try #require(serve.status("Threads"))
        #expect(serve.openDescriptors() - descriptorsBefore >= 300, "the server accepted every connection")
        #expect(during - before < 20, "\(before) threads before, \(during) with 300 connections open")
        withExtendedLifetime(held) {}
    }

    /// `richpush serve --per-ip-limit 2`: a third connection from 127.0.0.1 is closed on accept, well
    /// before the 30 s idle timeout or the 60 s head deadline, while 127.0.0.2 is served.
    @Test func serveHoldsAtMostThePerAddressLimit() async throws {
        let serve = try await ServeProcess.start(arguments: ["--per-ip-limit", "2", "--head-timeout", "60"])
        defer { serve.stop() }
        let port = serve.port
        let (refused, probe, held) = try await offThePool {
            let before = serve.openDescriptors()
            let held = try (0..<2).map { _ in try RawConnection(port: port) }
            // Wait until the server holds both, so the third is the one over the limit.
            let deadline = ContinuousClock.now + .seconds(10)
            while serve.openDescriptors() - before < 2 && ContinuousClock.now < deadline { usleep(20_000) }
            let third = try RawConnection(port: port)
            // Any time before the 30 s idle timeout (the 60 s head deadline comes later), which would
            // close it too.
            let refused = third.closedByPeer(within: .seconds(25))
            let probe = try RawHTTP.get("/hero.jpg", port: port, from: "127.0.0.2")
            return (refused, probe, held)
        }
        #expect(refused, "the third connection from one address is closed")
        #expect(probe?.status == 200, "another address is served")
        #expect(held.allSatisfy { !$0.closedByPeer() }, "the two within the limit stay open")
    }

    /// `richpush serve --head-timeout 1`: a silent connection is closed at the deadline, long before
    /// the 30 s idle timeout; `--per-ip-limit 0` and `--head-timeout 0` are usage errors.
    @Test func serveClosesASilentConnectionAtTheHeadTimeout() async throws {
        let serve = try await ServeProcess.start(arguments: ["--head-timeout", "1"])
        defer { serve.stop() }
        let port = serve.port
        let closed = try await offThePool {
            // Any time before the 30 s idle timeout, which would close it too.
            try RawConnection(port: port).closedByPeer(within: .seconds(25))
        }
        #expect(closed)
        for arguments in [["--per-ip-limit", "0"], ["--head-timeout", "0"], ["--head-timeout", "soon"]] {
            let run = try await RichPushBinary.run(["serve", Fixtures.assets, "--no-tls"] + arguments)
            #expect(run.status == 64, "\(arguments): \(run.stderr)")
        }
    }

    /// An 80 MB generated body (over the old 64 MB cap), gzipped, is compressed while it is sent: it arrives whole and the
    /// server's peak memory stays small (it used to build the body and its compressed copy in memory).
    @Test func streamsALargeGzipBodyInLittleMemory() async throws {
        let serve = try await ServeProcess.start()
        defer { serve.stop() }
        let port = serve.port
        let size = 80_000_000
        let baseline = try #require(serve.status("VmRSS"))
        let response = try await offThePool { try RawHTTP.get("/hero.jpg?gzip=1&size=\(size)", port: port) }
        let peak = try #require(serve.status("VmHWM"))
        let body = try #require(response).body
        #expect(response?.status == 200 && response?.headers["content-encoding"] == "gzip")
        #expect(body.count < 1_000_000, "zeros compress")
        #expect(peak - baseline < 32 << 10, "peak resident memory \(peak >> 10) MB, \(baseline >> 10) MB before")

        let folder = try Fixtures.temporaryFolder("richpush-gzip")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(body).write(to: URL(fileURLWithPath: folder + "/body.gz"))
        let status = try await ChildProcess.run("/bin/sh", ["-c", "gzip -dc body.gz > body"], directory: folder).status
        #expect(status == 0, "a complete, valid gzip stream")
        let decoded = try FileHandle(forReadingFrom: URL(fileURLWithPath: folder + "/body"))
        defer { try? decoded.close() }
        let asset = try Fixtures.bytes(ofAsset: "hero.jpg")
        #expect(try decoded.read(upToCount: asset.count).map(Array.init) == asset)
        #expect(try decoded.seekToEnd() == UInt64(size))
        try decoded.seek(toOffset: UInt64(size - 4096))
        #expect(try decoded.read(upToCount: 4096).map { $0.allSatisfy { $0 == 0 } } == true)
    }
}

/// `richpush serve --no-tls` on the sample assets, started from the built binary, port chosen by the system.
struct ServeProcess: Sendable {
    let running: RunningBinary
    let port: UInt16
    let folder: String

    static func start(arguments: [String] = []) async throws -> ServeProcess {
        let folder = try Fixtures.temporaryFolder("richpush-serve")
        let stdout = folder + "/stdout"
        let running = try RichPushBinary.start(
            ["serve", Fixtures.assets, "--no-tls"] + arguments, stdoutPath: stdout)
        // Generous: a loaded machine has taken over 12 s to start the binary.
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOfFile: stdout, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first,
                let port = UInt16(line.split(separator: ":").last?.filter(\.isNumber) ?? "")
            {
                return ServeProcess(running: running, port: port, folder: folder)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        running.signal(SIGKILL)
        _ = await running.wait()
        throw POSIXError(.ETIMEDOUT)
    }

    /// A number from the server's /proc/PID/status (`Threads`; `VmRSS` and `VmHWM` in KiB).
    func status(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(running.pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
        else { return nil }
        return Int(line.dropFirst(field.count + 1).split(whereSeparator: \.isWhitespace).first ?? "")
    }

    /// How many descriptors the server has open.
    func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(running.pid)/fd").count) ?? 0
    }

    /// Interrupts the server (SIGINT, as Ctrl-C) and waits for it; returns what it printed.
    @discardableResult
    func stop() async -> BinaryRun {
        running.signal(SIGINT)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        return await running.wait()
    }

    /// Stops the server without waiting (for `defer`).
    func stop() {
        running.signal(SIGINT)
        let running = running
        Task.detached { _ = await running.wait() }
        try? FileManager.default.removeItem(atPath: folder)
    }
}
