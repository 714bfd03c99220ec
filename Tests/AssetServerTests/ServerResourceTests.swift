import AssetServer
import Foundation
import Synchronization
import TestSupport
import Testing

/// What many, slow or large responses cost the server: threads, memory, and other clients' waits.
@Suite struct ServerResourceTests {
    static let head = "HEAD /hero.jpg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    /// Connections whose responses wait on purpose (stalled bodies, long delays) and connections that
    /// say nothing hold none of the server's few threads: a new client is still answered at once.
    @Test func stalledConnectionsLeaveRoomForAFreshClient() async throws {
        let server = try AssetServer(root: Fixtures.assets, threads: 2)
        defer { server.stop() }
        let port = server.httpPort
        let held = try await offThePool {
            var held: [RawConnection] = []
            for index in 0..<150 {
                let connection = try RawConnection(port: port)
                switch index % 3 {
                case 0: try connection.send("GET /hero.jpg?stall=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                case 1: try connection.send("GET /hero.jpg?delay=600000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
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
        let started = ContinuousClock.now
        let fresh = try await offThePool { try RawHTTP.get("/hero.jpg", port: port) }
        #expect(fresh?.status == 200)
        #expect(fresh?.body == (try Fixtures.bytes(ofAsset: "hero.jpg")))
        #expect(ContinuousClock.now - started < .seconds(3), "answered while 150 others wait")
        let stopping = ContinuousClock.now
        server.stop()
        #expect(ContinuousClock.now - stopping < .seconds(5), "stopping resumes and ends every waiting response")
        withExtendedLifetime(held) {}
    }

    /// Hundreds of open keep-alive connections add no threads (one thread per connection did).
    @Test func threadCountStaysBoundedWithManyConnections() async throws {
        let server = try AssetServer(root: Fixtures.assets, threads: 2)
        defer { server.stop() }
        let port = server.httpPort
        let before = threadCount()
        let held = try await offThePool {
            var held: [RawConnection] = []
            for _ in 0..<300 {
                let connection = try RawConnection(port: port)
                try connection.send(Self.head)
                // Answered, so accepted and handled; the connection then stays open, idle.
                _ = connection.receive { $0.firstRange(of: [13, 10, 13, 10]) != nil }
                held.append(connection)
            }
            return held
        }
        let during = threadCount()
        #expect(held.count == 300)
        #expect(during - before < 60, "\(before) threads before, \(during) with 300 connections open")
        withExtendedLifetime(held) {}
    }

    /// A 100 MB generated body, gzipped, is compressed while it is sent: it arrives whole and the
    /// server never holds it (it used to build the body and its compressed copy in memory).
    @Test func streamsALargeGzipBodyInLittleMemory() async throws {
        let server = try AssetServer(root: Fixtures.assets, threads: 2)
        defer { server.stop() }
        let port = server.httpPort
        let size = 100_000_000
        let baseline = Fixtures.residentBytes()
        let peak = PeakSampler()
        let response = try await offThePool { try RawHTTP.get("/hero.jpg?gzip=1&size=\(size)", port: port) }
        let highest = peak.stop()
        let body = try #require(response).body
        #expect(response?.status == 200 && response?.headers["content-encoding"] == "gzip")
        #expect(body.count < 1_000_000, "zeros compress")
        #expect(highest - baseline < 48 << 20, "resident memory grew by \((highest - baseline) >> 20) MB")

        let folder = try Fixtures.temporaryFolder("richpush-gzip")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(body).write(to: URL(fileURLWithPath: folder + "/body.gz"))
        let gunzip = Process()
        gunzip.executableURL = URL(fileURLWithPath: "/bin/sh")
        gunzip.arguments = ["-c", "gzip -dc body.gz > body"]
        gunzip.currentDirectoryURL = URL(fileURLWithPath: folder)
        try gunzip.run()
        gunzip.waitUntilExit()
        #expect(gunzip.terminationStatus == 0, "a complete, valid gzip stream")
        let decoded = try FileHandle(forReadingFrom: URL(fileURLWithPath: folder + "/body"))
        defer { try? decoded.close() }
        let asset = try Fixtures.bytes(ofAsset: "hero.jpg")
        #expect(try decoded.read(upToCount: asset.count).map(Array.init) == asset)
        #expect(try decoded.seekToEnd() == UInt64(size))
        try decoded.seek(toOffset: UInt64(size - 4096))
        #expect(try decoded.read(upToCount: 4096).map { $0.allSatisfy { $0 == 0 } } == true)
    }
}

/// Samples this process's resident memory every 5 ms on its own thread and keeps the highest value.
final class PeakSampler: Sendable {
    private let highest = Atomic<Int>(0)
    private let running = Atomic<Bool>(true)
    private let finished = DispatchSemaphore(value: 0)

    init() {
        highest.store(Fixtures.residentBytes(), ordering: .relaxed)
        Thread.detachNewThread { [self] in
            while running.load(ordering: .relaxed) {
                let now = Fixtures.residentBytes()
                if now > highest.load(ordering: .relaxed) { highest.store(now, ordering: .relaxed) }
                usleep(5000)
            }
            finished.signal()
        }
    }

    /// Stops sampling and returns the highest resident size seen, in bytes.
    func stop() -> Int {
        running.store(false, ordering: .relaxed)
        finished.wait()
        return highest.load(ordering: .relaxed)
    }
}
