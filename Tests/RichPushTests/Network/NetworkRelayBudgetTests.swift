import AssetServer
import Foundation
import POSIXKit
import RichPush
import TestSupport
import Testing

/// The relay's shared buffer budget: back-pressure past it, bytes intact, no deadlock, and its
/// descriptor accounting. Raw HTTP/1.1 over sockets straight to a relay route (no curl), against an
/// asset server on 127.0.0.1 that each test starts.
@Suite struct NetworkRelayBudgetTests {
    let folder: String
    let server: AssetServer
    let blob: Data

    init() throws {
        folder = try Fixtures.temporaryFolder("richpush-relay-budget")
        // Random bytes, eight at a time (a byte at a time costs seconds of CPU in a debug build,
        // which starves the timing-bound tests running beside this suite).
        var generator = SystemRandomNumberGenerator()
        blob = Data((0..<125_000).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } })
        try blob.write(to: URL(fileURLWithPath: folder + "/blob.bin"))
        server = try AssetServer(root: folder)
    }

    func cleanUp() {
        server.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test func aTinyBudgetSlowsManyConnectionsButNeverCorruptsOrDeadlocks() async throws {
        defer { cleanUp() }
        // About three chunks for 40 connections, each of whose links wants about 170 KB in flight: every
        // direction lives on its one-chunk floor, and the budget is spent all the time.
        let budget = 3 * NetworkRelay.chunkBytes + 1024
        let relay = try NetworkRelay(
            profile: try NetworkProfile(parsing: "down=100mbit,rtt=20ms"), bufferBudget: budget)
        defer { relay.stop() }
        let port = try relay.route(toHost: "127.0.0.1", port: Int(server.httpPort))
        let connections = 40
        let responses = try await offThePool {
            try RawHTTP.getAll(
                port: port, path: "/blob.bin", connections: connections, within: TimeScale.scaled(.seconds(120)))
        }
        #expect(responses.count == connections)
        for response in responses {
            #expect(response.status == 200)
            #expect(response.body == blob, "the body arrived whole and in order (\(response.body.count) bytes)")
        }
        let statistics = relay.statistics
        #expect(statistics.bytesDown >= Int64(connections * blob.count))
        #expect(statistics.budgetWaits > 0, "the budget bound, so directions waited for it")
        // At most the budget, or one chunk per direction (the floor), plus the segment rings (a few KB each).
        let floor = 2 * connections * (NetworkRelay.chunkBytes + 64)
        let rings = 2 * connections * 4096
        #expect(statistics.peakBufferBytes <= Int64(budget + floor + rings), "peak \(statistics.peakBufferBytes)")
        #expect(statistics.bufferBytes == 0, "every chunk was freed once the bytes left")
    }

    @Test func aBudgetThatDoesNotBindNeverHoldsAConnectionBack() async throws {
        defer { cleanUp() }
        let relay = try NetworkRelay(profile: try NetworkProfile(parsing: "down=50mbit,up=10mbit,rtt=115ms"))
        defer { relay.stop() }
        #expect(relay.bufferBudget == NetworkRelay.defaultBufferBudget)
        let port = try relay.route(toHost: "127.0.0.1", port: Int(server.httpPort))
        let responses = try await offThePool {
            try RawHTTP.getAll(port: port, path: "/blob.bin", connections: 4, within: TimeScale.scaled(.seconds(60)))
        }
        #expect(responses.allSatisfy { $0.status == 200 && $0.body == blob })
        let statistics = relay.statistics
        #expect(statistics.budgetWaits == 0)
        #expect(statistics.peakBufferBytes > Int64(NetworkRelay.chunkBytes), "a direction grew past its floor")
    }

    @Test func countsTheDescriptorsItHolds() async throws {
        defer { cleanUp() }
        let relay = try NetworkRelay(profile: try NetworkProfile(parsing: "down=10mbit,rtt=10ms"))
        defer { relay.stop() }
        #expect(NetworkRelay.descriptorsPerTransfer == 2)
        #expect(relay.statistics.descriptors == NetworkRelay.fixedDescriptors)
        let port = try relay.route(toHost: "127.0.0.1", port: Int(server.httpPort))
        let routed = NetworkRelay.fixedDescriptors + NetworkRelay.descriptorsPerRoute
        #expect(relay.statistics.descriptors == routed)
        // A run's descriptor estimate counts what the relay holds itself (batch and bench with --network
        // came out 2 to 4 short of what they used).
        let need = DescriptorBudget.Need(concurrency: 3, relayed: true, storing: false)
        #expect(need.fixed == relay.statistics.descriptors)
        #expect(DescriptorBudget.Need(concurrency: 3, relayed: false, storing: false).fixed == 0)
        #expect(
            DescriptorBudget.Need(concurrency: 3, relayed: true, storing: false, profiles: 3).fixed
                == NetworkRelay.fixedDescriptors + 3 * NetworkRelay.descriptorsPerRoute)
        let responses = try await offThePool {
            try RawHTTP.getAll(port: port, path: "/blob.bin", connections: 3, within: TimeScale.scaled(.seconds(60)))
        }
        #expect(responses.count == 3)
        // The relay closes its two descriptors per connection once both directions have ended.
        let deadline = ContinuousClock.now + TimeScale.scaled(.seconds(20))
        while relay.statistics.active > 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let statistics = relay.statistics
        #expect(statistics.accepted == 3)
        #expect(statistics.active == 0)
        #expect(statistics.descriptors == routed)
        #expect(statistics.descriptorFailures == 0)
    }

    @Test func holdsTwoDescriptorsPerOpenConnection() async throws {
        defer { cleanUp() }
        let relay = try NetworkRelay(profile: try NetworkProfile(parsing: "down=10mbit,rtt=10ms"))
        defer { relay.stop() }
        let port = try relay.route(toHost: "127.0.0.1", port: Int(server.httpPort))
        let open = try await offThePool { try (0..<5).map { _ in try RawHTTP.connect(port: port) } }
        defer { open.forEach { close($0) } }
        let expected =
            NetworkRelay.fixedDescriptors + NetworkRelay.descriptorsPerRoute
            + 5 * NetworkRelay.descriptorsPerTransfer
        let deadline = ContinuousClock.now + TimeScale.scaled(.seconds(20))
        while relay.statistics.descriptors != expected && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(relay.statistics.descriptors == expected)
        #expect(relay.statistics.active == 5)
    }
}

/// Plain HTTP/1.1 GETs over many sockets at once, driven by one poll loop on the calling thread.
enum RawHTTP {
    struct Response {
        var status: Int
        var body: Data
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A blocking connection to 127.0.0.1:`port`.
    static func connect(port: Int) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw Failure(description: "connect to 127.0.0.1:\(port): errno \(errno)")
        }
        return descriptor
    }

    /// GETs `path` on `connections` connections at once; each response is read to the server's close.
    static func getAll(port: Int, path: String, connections: Int, within limit: Duration) throws -> [Response] {
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        var descriptors: [Int32] = []
        defer { descriptors.forEach { if $0 >= 0 { close($0) } } }
        for _ in 0..<connections {
            let descriptor = try connect(port: port)
            descriptors.append(descriptor)
            let sent = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
            guard sent == request.count else { throw Failure(description: "send: errno \(errno)") }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        }
        var received = [Data](repeating: Data(), count: connections)
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = ContinuousClock.now + limit
        while descriptors.contains(where: { $0 >= 0 }) {
            guard ContinuousClock.now < deadline else {
                let open = descriptors.filter { $0 >= 0 }.count
                throw Failure(description: "\(open) of \(connections) responses unfinished after \(limit): a deadlock")
            }
            var polls = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&polls, nfds_t(polls.count), 100) >= 0 || errno == EINTR else {
                throw Failure(description: "poll: errno \(errno)")
            }
            for index in polls.indices where polls[index].fd >= 0 && polls[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { recv(polls[index].fd, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    received[index].append(contentsOf: buffer[0..<count])
                } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                    close(descriptors[index])
                    descriptors[index] = -1
                }
            }
        }
        return try received.map { response in
            let separator = Data("\r\n\r\n".utf8)
            guard let end = response.range(of: separator) else {
                throw Failure(description: "a response without a header (\(response.count) bytes)")
            }
            let head = String(decoding: response[..<end.lowerBound], as: UTF8.self)
            let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return Response(status: status, body: Data(response[end.upperBound...]))
        }
    }
}
