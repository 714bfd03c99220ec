import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// The shaping relay under the fetch engine, against the embedded asset server on 127.0.0.1.
///
/// Timing bounds are generous: never faster than the model (the relay shapes), and at most twice it
/// plus a few seconds for a machine the rest of the suite keeps busy (stretched with ``TimeScale``).
/// bench/network-fidelity.sh measures the fidelity itself.
@Suite struct NetworkRelayTests {
    let rig: LocalRig
    var server: AssetServer { rig.server }

    init() throws { rig = try LocalRig() }

    func cleanUp() { rig.cleanUp() }

    /// The test policy (test CA, cdn.example.com mapped to the server) under `profile`.
    func policy(_ profile: NetworkProfile, http: Bool = false) -> FetchPolicy {
        var policy = Fixtures.fetchPolicy(mapping: server)
        policy.network = profile
        policy.allowHTTP = http
        policy.connectTimeout = .seconds(30)
        return policy
    }

    /// Downloads `url` into a new file; returns the result and the file's bytes.
    ///
    /// The test compares whole bytes with the source (equal bytes, equal SHA-256), in-process: a
    /// `sha256sum` process per download would fork hundreds of processes at once.
    func download(_ url: String, policy: FetchPolicy) async throws -> (FetchResult, Data) {
        let path = rig.folder + "/" + UUID().uuidString
        let request = FetchRequest(url: url, budget: TimeScale.scaled(.seconds(60)), policy: policy)
        let result = try await rig.engine.fetch(request, toNewFileAt: path)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try FileManager.default.removeItem(atPath: path)
        return (result, bytes)
    }

    func asset(_ name: String) throws -> Data { Data(try Fixtures.bytes(ofAsset: name)) }

    @Test(arguments: NetworkProfile.builtIn, [false, true])
    func bytesArriveIntactThroughEveryProfile(profile: NetworkProfile, http: Bool) async throws {
        defer { cleanUp() }
        let url = http ? server.httpBaseURL + "/hero.png" : "https://cdn.example.com/hero.png"
        let (result, body) = try await download(url, policy: policy(profile, http: http))
        #expect(result.httpStatus == 200)
        #expect(body == (try asset("hero.png")))
        let relay = try rig.engine.relay(for: profile)
        #expect(relay.statistics.accepted >= 1, "the connection went through the relay")
        #expect(relay.statistics.bytesDown >= result.bytes)
        // Not loopback any more: at least the handshake round trip and the request's were paid.
        #expect(result.timings.total >= profile.roundTrip * 2)
    }

    @Test(arguments: [false, true])
    func aKnownTransferTakesWhatTheModelPredicts(http: Bool) async throws {
        defer { cleanUp() }
        let folder = try Fixtures.temporaryFolder("richpush-relay")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bytes = (0..<200_000).map { _ in UInt8.random(in: 0...255) }
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/blob.bin"))
        let blobServer = try AssetServer(root: folder, tls: try Fixtures.tlsIdentity())
        defer { blobServer.stop() }
        let profile = try NetworkProfile(parsing: "down=1mbit,up=1mbit,rtt=100ms")
        var policy = self.policy(profile, http: http)
        policy.hostMappings = [
            HostMapping(
                host: "cdn.example.com", port: "443", targetHost: "127.0.0.1",
                targetPort: "\(blobServer.httpsPort ?? 0)")
        ]
        let url = http ? blobServer.httpBaseURL + "/blob.bin" : "https://cdn.example.com/blob.bin"
        let started = ContinuousClock.now
        let (result, body) = try await download(url, policy: policy)
        let elapsed = ContinuousClock.now - started
        #expect(result.bytes == 200_000)
        #expect(body == Data(bytes))
        let model = TransferEstimate(profile: profile, bytes: 200_000, secure: !http).duration
        #expect(elapsed >= model * 0.8, "took \(elapsed), the model says \(model)")
        // Generous above: the suite starts with seconds in which every test waits for the machine; a
        // relay that stalls (a lost wake-up, a budget that never frees) takes far longer than this.
        #expect(elapsed <= TimeScale.scaled(model * 2 + .seconds(15)), "took \(elapsed), the model says \(model)")
    }

    @Test func carriesTwoHundredConcurrentConnections() async throws {
        defer { cleanUp() }
        // Plain HTTP: 200 TLS handshakes at once would test the machine, not the relay.
        let profile = try NetworkProfile(parsing: "down=20mbit,rtt=200ms")
        let policy = self.policy(profile, http: true)
        let url = server.httpBaseURL + "/hero.jpg"
        let expected = try asset("hero.jpg")
        let started = ContinuousClock.now
        let bodies = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<200 {
                group.addTask { try await download(url, policy: policy).1 }
            }
            return try await group.reduce(into: [Data]()) { $0.append($1) }
        }
        #expect(bodies.count == 200)
        #expect(bodies.allSatisfy { $0 == expected })
        // Each download pays at least two 200 ms round trips through the relay: one after another they
        // could not take less than 80 s, however fast the machine.
        let oneAfterAnother = profile.roundTrip * 2 * 200
        #expect(ContinuousClock.now - started < oneAfterAnother, "the relay carried them at once")
        let statistics = try rig.engine.relay(for: profile).statistics
        #expect(statistics.accepted == 200, "a fresh connection per download, each through the relay")
        #expect(statistics.upstreamFailures == 0)
    }

    @Test func lossStallsButNeverCorrupts() async throws {
        defer { cleanUp() }
        let profile = try NetworkProfile(parsing: "down=50mbit,rtt=10ms,loss=20%")
        let (result, body) = try await download("https://cdn.example.com/hero.png", policy: policy(profile))
        #expect(body == (try asset("hero.png")))
        let relay = try rig.engine.relay(for: profile)
        #expect(relay.statistics.lostSegments > 0)
        // A 38 kB body in about 27 segments at 20%: at least one 200 ms stall.
        #expect(result.timings.total >= .milliseconds(200))
    }

    /// The server sees the connection when the emulated handshake reaches it, with the request right
    /// behind, as on a real network. Connected at the accept, it would wait a round trip and a half
    /// (4.5 s here) for the request, and a server that closes silent connections sooner (this one,
    /// after 2 s, as many CDNs' edges do) would close every one of them.
    @Test func theServerSeesTheConnectionWithItsRequestNotARoundTripEarlier() async throws {
        defer { cleanUp() }
        let strict = try AssetServer(root: Fixtures.assets, headTimeout: .seconds(2))
        defer { strict.stop() }
        let (result, body) = try await download(
            strict.httpBaseURL + "/hero.jpg",
            policy: policy(try NetworkProfile(parsing: "down=10mbit,rtt=3s"), http: true))
        #expect(result.httpStatus == 200)
        #expect(body == (try asset("hero.jpg")))
    }

    @Test func anUnreachableUpstreamFailsTheDownloadQuickly() async throws {
        defer { cleanUp() }
        let closed = try ClosedPort().number
        var policy = self.policy(try NetworkProfile(parsing: "down=10mbit,rtt=10ms"), http: true)
        policy.hostMappings = []
        // The relay closes the connection when the upstream refuses it: a failure of its own, not one
        // of the timers (connect timeout, budget) that a relay holding the connection would run out.
        do {
            _ = try await download("http://127.0.0.1:\(closed)/hero.jpg", policy: policy)
            Issue.record("downloaded from a closed port")
        } catch let error as FetchError {
            #expect(![.connectTimeout, .deadlineExceeded, .stalled].contains(error.code), "\(error)")
        }
    }

    @Test func aStoppedRelayRefusesNewRoutesAndStopsOnce() throws {
        let relay = try NetworkRelay(profile: try NetworkProfile(parsing: "down=1mbit"))
        let port = try relay.route(toHost: "127.0.0.1", port: 9)
        #expect(port > 0)
        #expect(try relay.route(toHost: "127.0.0.1", port: 9) == port, "one listener per target")
        relay.stop()
        relay.stop()
        #expect(throws: NetworkError.self) { _ = try relay.route(toHost: "127.0.0.1", port: 10) }
    }

    @Test func theEngineStopsItsRelaysWhenItShutsDown() throws {
        let engine = try FetchEngine(loops: 1)
        let relay = try engine.relay(for: try NetworkProfile(parsing: "down=1mbit"))
        _ = try relay.route(toHost: "127.0.0.1", port: 9)
        engine.shutdown()
        #expect(throws: NetworkError.self) { _ = try relay.route(toHost: "127.0.0.1", port: 11) }
        #expect(throws: FetchError.self) { _ = try engine.relay(for: try NetworkProfile(parsing: "down=2mbit")) }
    }
}
