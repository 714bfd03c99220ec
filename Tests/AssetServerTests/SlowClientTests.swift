import Foundation
import TestSupport
import Testing

@testable import AssetServer

/// Slow and silent clients (slowloris, TCP without a ClientHello) cannot hold the server's slots:
/// a request head has a deadline that trickling does not push back, and one address may hold only
/// its share of the connections.
@Suite struct SlowClientTests {
    /// A client that sends a request line, then one header line every 200 ms, never ending its head,
    /// is closed at the 1 s head deadline (it used to be held as long as it trickled: the idle
    /// timeout starts over at every byte).
    @Test func aTricklingClientIsClosedAtTheHeadDeadline() async throws {
        let server = try AssetServer(
            root: Fixtures.assets, threads: 1, headTimeout: .seconds(1), idleTimeout: .seconds(60))
        defer { server.stop() }
        let port = server.httpPort
        // Trickling keeps the 60 s idle timeout from ever firing: no other event bounds the wait.
        let bound = TimeScale.scaled(.seconds(15))
        let (closed, lines, elapsed) = try await offThePool {
            let connection = try RawConnection(port: port)
            let started = ContinuousClock.now
            try connection.send("GET /hero.jpg HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            var lines = 0
            while ContinuousClock.now - started < bound {
                if connection.closedByPeer(within: .milliseconds(200)) {
                    return (true, lines, ContinuousClock.now - started)
                }
                do { try connection.send("X-Trickle-\(lines): 1\r\n") } catch {
                    return (true, lines, ContinuousClock.now - started)
                }
                lines += 1
            }
            return (false, lines, ContinuousClock.now - started)
        }
        #expect(closed, "still open after trickling \(lines) header lines for \(elapsed)")
        #expect(elapsed >= .milliseconds(900), "closed at the deadline, not before: \(elapsed)")
        #expect(try await offThePool { try RawHTTP.get("/hero.jpg", port: port) }?.status == 200)
    }

    /// A connection that sends nothing, over plain HTTP or to the HTTPS port (no ClientHello), is
    /// closed at the 1 s deadline for the TLS handshake and head, long before the idle timeout.
    @Test(arguments: [false, true])
    func aSilentConnectionIsClosedAtTheHeadDeadline(tls: Bool) async throws {
        let server = try AssetServer(
            root: Fixtures.assets, tls: Fixtures.tlsIdentity(), threads: 1, headTimeout: .seconds(1),
            idleTimeout: .seconds(60))
        defer { server.stop() }
        let port = tls ? try #require(server.httpsPort) : server.httpPort
        // Any time before the 60 s idle timeout, which would close it too.
        let bound = Duration.seconds(50)
        let (closed, elapsed) = try await offThePool {
            let connection = try RawConnection(port: port)
            let started = ContinuousClock.now
            let closed = connection.closedByPeer(within: bound)
            return (closed, ContinuousClock.now - started)
        }
        #expect(closed, "a silent \(tls ? "TLS" : "HTTP") connection still open after \(elapsed)")
        #expect(elapsed >= .milliseconds(900), "closed at the deadline, not before: \(elapsed)")
    }

    /// A connection that is answered owes nothing while its response waits (a `delay=` fault longer
    /// than the head deadline), and is not closed for it.
    @Test func aSlowResponseIsNotCutByTheHeadDeadline() async throws {
        let server = try AssetServer(
            root: Fixtures.assets, threads: 1, headTimeout: .seconds(1), idleTimeout: .seconds(60))
        defer { server.stop() }
        let port = server.httpPort
        let response = try await offThePool {
            try RawHTTP.get("/hero.jpg?delay=2500", port: port, timeout: .seconds(50))
        }
        #expect(response?.status == 200)
        #expect(response?.body == (try Fixtures.bytes(ofAsset: "hero.jpg")))
    }

    /// 200 slowloris connections from 127.0.0.1 against a server holding 100, at most 50 from one
    /// address: the 150 over the address's share are closed at once, and a client from another
    /// address (127.0.0.2) is answered although the head deadline (60 s here) frees nothing. Without
    /// a per-address limit the slowloris took all 100 slots and the probe waited in the listen queue.
    @Test func aProbeFromAnotherAddressIsAnsweredWhileSlowlorisHoldsItsShare() async throws {
        let server = try AssetServer(
            root: Fixtures.assets, connectionLimit: 100, perAddressLimit: 50, threads: 1, headTimeout: .seconds(60),
            idleTimeout: .seconds(60))
        defer { server.stop() }
        #expect(server.connectionLimit == 100 && server.perAddressLimit == 50)
        let port = server.httpPort
        // The head deadline frees slots 60 s after the first accept at the earliest: what follows must
        // come before it to show the limit, not the deadline, made room.
        let opened = ContinuousClock.now
        let held = try await offThePool {
            try (0..<200).map { index in
                let connection = try RawConnection(port: port)
                try? connection.send("GET /hero.jpg?n=\(index) HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n")
                return connection
            }
        }
        let closed = try await offThePool {
            // Within half the head deadline, every connection over the share is closed (refused on accept).
            let deadline = opened + .seconds(30)
            var closed = Set<Int>()
            while closed.count < 150 && ContinuousClock.now < deadline {
                for (index, connection) in held.enumerated() where !closed.contains(index) {
                    if connection.closedByPeer() { closed.insert(index) }
                }
                if closed.count < 150 { usleep(50_000) }
            }
            return closed.count
        }
        #expect(closed == 150, "one address holds its 50 and no more")
        let probe = try await offThePool {
            try RawHTTP.get("/hero.jpg", port: port, from: "127.0.0.2", timeout: .seconds(25))
        }
        #expect(probe?.status == 200, "a client from another address is served")
        #expect(probe?.body == (try Fixtures.bytes(ofAsset: "hero.jpg")))
        #expect(ContinuousClock.now < opened + server.headTimeout, "served before the head deadline freed a slot")
        withExtendedLifetime(held) {}
    }

    /// By default one address may take all but an eighth of the slots: a benchmark's burst of 2,000
    /// from 127.0.0.1 fits under the default 4,096, and 512 stay for everyone else.
    @Test func theDefaultShareLeavesHeadroomForOtherClients() throws {
        #expect(AssetServer.defaultPerAddressLimit(4096) == 3584)
        #expect(AssetServer.defaultPerAddressLimit(20) == 18)
        #expect(AssetServer.defaultPerAddressLimit(2) == 1)
        #expect(AssetServer.defaultPerAddressLimit(1) == 1)
        let server = try AssetServer(root: Fixtures.assets, connectionLimit: 64, perAddressLimit: 1000, threads: 1)
        defer { server.stop() }
        #expect(server.perAddressLimit == 64, "at most the connection limit")
        #expect(server.headTimeout == AssetServer.defaultHeadTimeout)
    }
}

/// The deadlines' decisions, without sockets or threads.
@Suite struct HeadDeadlinesTests {
    let start = ContinuousClock.now

    @Test func aConnectionIsDueItsFirstHeadFromItsAccept() {
        var deadlines = HeadDeadlines(firstHead: .seconds(5), nextHead: .seconds(30))
        deadlines.opened(1, socket: 11, at: start)
        deadlines.opened(2, socket: 12, at: start + .seconds(3))
        #expect(deadlines.expire(at: start + .milliseconds(4999)).isEmpty)
        #expect(deadlines.expire(at: start + .seconds(5)) == [11])
        #expect(deadlines.expire(at: start + .seconds(6)).isEmpty, "each overdue socket is returned once")
        #expect(deadlines.expire(at: start + .seconds(8)) == [12])
        #expect(deadlines.waiting == 0 && deadlines.connections.count == 2, "listed until closed")
        deadlines.closed(1)
        deadlines.closed(2)
        #expect(deadlines.connections.isEmpty)
    }

    @Test func aRequestBeingAnsweredOwesNothingAndTheNextHeadIsDueFromItsEnd() {
        var deadlines = HeadDeadlines(firstHead: .seconds(5), nextHead: .seconds(30))
        deadlines.opened(1, socket: 11, at: start)
        deadlines.headArrived(1)
        #expect(deadlines.expire(at: start + .seconds(600)).isEmpty, "a long response is not cut")
        deadlines.requestEnded(1, at: start + .seconds(600))
        #expect(deadlines.waiting == 1)
        #expect(deadlines.expire(at: start + .seconds(629)).isEmpty)
        #expect(deadlines.expire(at: start + .seconds(630)) == [11])
    }

    @Test func eventsOfAConnectionAlreadyClosedChangeNothing() {
        var deadlines = HeadDeadlines(firstHead: .seconds(5), nextHead: .seconds(30))
        deadlines.opened(1, socket: 11, at: start)
        deadlines.closed(1)
        deadlines.headArrived(1)
        deadlines.requestEnded(1, at: start)
        #expect(deadlines.connections.isEmpty)
        #expect(deadlines.expire(at: start + .seconds(60)).isEmpty)
        // A new connection at a reused address starts over.
        deadlines.opened(1, socket: 13, at: start + .seconds(10))
        #expect(deadlines.expire(at: start + .seconds(15)) == [13])
    }
}
