import AssetServer
import Foundation
import RichPush
import Synchronization
import TestSupport
import Testing

/// The server itself: paths, methods, listeners and fault parsing. Fault behaviour seen by a client
/// is covered in FetchEngineTests.
@Suite struct AssetServerTests {
    @Test func listensOnLoopbackWithSystemChosenPorts() throws {
        let server = try Fixtures.startServer()
        defer { server.stop() }
        #expect(server.httpPort != 0)
        #expect(server.httpsPort != nil && server.httpsPort != server.httpPort)
        #expect(server.httpBaseURL.hasPrefix("http://127.0.0.1:"))
    }

    @Test func twoServersNeverCollide() throws {
        let first = try Fixtures.startServer()
        let second = try Fixtures.startServer()
        defer {
            first.stop()
            second.stop()
        }
        #expect(first.httpPort != second.httpPort)
    }

    @Test func refusesAFolderThatDoesNotExist() {
        let error = #expect(throws: AssetServerError.self) { try AssetServer(root: "/nonexistent/richpush") }
        #expect(error?.kind == .start, "a server that cannot start: exit 69")
    }

    @Test func refusesAnUnusableCertificate() {
        let bogus = TLSIdentity(certificatePEM: "not a certificate", keyPEM: "not a key")
        let error = #expect(throws: AssetServerError.self) { try AssetServer(root: Fixtures.assets, tls: bogus) }
        #expect(error?.kind == .start)
    }

    @Test(arguments: ["/../Package.swift", "/%2e%2e/Package.swift", "/../../etc/passwd", "/./../certs/ca.pem"])
    func neverServesOutsideItsFolder(path: String) async throws {
        let status = try await Self.status(of: path)
        #expect(status == 404 || status == 400)
    }

    @Test func refusesAFolderAsAnAsset() async throws {
        let folder = try Fixtures.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: true)
        let server = try AssetServer(root: folder)
        defer {
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }
        #expect(try await Self.status(of: "/sub", on: server) == 404)
    }

    @Test func neverFollowsALinkOutOfItsFolder() async throws {
        let folder = try Fixtures.temporaryFolder()
        try FileManager.default.createSymbolicLink(atPath: folder + "/passwd.jpg", withDestinationPath: "/etc/passwd")
        let server = try AssetServer(root: folder)
        defer {
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }
        #expect(try await Self.status(of: "/passwd.jpg", on: server) == 404)
    }

    @Test func answersAMalformedFaultWith400() async throws {
        #expect(try await Self.status(of: "/hero.jpg?delay=soon") == 400)
        #expect(try await Self.status(of: "/hero.jpg?status=42") == 400)
    }

    @Test func countsRequests() async throws {
        let server = try Fixtures.startServer()
        defer { server.stop() }
        _ = try await Self.status(of: "/hero.jpg", on: server)
        _ = try await Self.status(of: "/hero.jpg?redirect=2", on: server)
        #expect(server.requestCount == 2, "one for the asset, one for the redirect that was not followed")
    }

    @Test func stopsPromptlyWhileAResponseIsStalled() async throws {
        let server = try Fixtures.startServer()
        let engine = try FetchEngine(loops: 1)
        defer { engine.shutdown() }
        var policy = FetchPolicy()
        policy.allowHTTP = true
        let request = FetchRequest(
            url: server.httpBaseURL + "/hero.jpg?stall=100", budget: .seconds(60), policy: policy)
        let task = Task { try? await engine.fetch(request, writingTo: -1) }
        try await Task.sleep(for: .milliseconds(300))
        server.stop()
        // The stall never ends, so only the server (ending the response) or the client (leaving at its
        // deadline) can end it: stop() returned before the client's 60 s budget ran out.
        #expect(ContinuousClock.now < request.deadline, "stop() waited for the client to give up")
        _ = await task.value
    }

    @Test func parsesFaultPlans() throws {
        let plan = try FaultPlan(query: [
            ("delay", "250"), ("status", "503"), ("redirect", "2"), ("gzip", "1"), ("rate", "10"),
        ])
        #expect(plan.delayMilliseconds == 250 && plan.status == 503 && plan.redirects == 2 && plan.gzip)
        #expect(plan.bytesPerSecond == 10)
        #expect(plan.passthroughQuery.map(\.0) == ["delay", "status", "gzip", "rate"])
        #expect(throws: FaultPlanError.self) { try FaultPlan(query: [("rate", "0")]) }
        #expect(throws: FaultPlanError.self) { try FaultPlan(query: [("gzip", "maybe")]) }
        #expect(throws: FaultPlanError.self) { try FaultPlan(query: [("size", "-1")]) }
        #expect(throws: FaultPlanError.self) { try FaultPlan(query: [("stal", "0")], strict: true) }
        let lenient = try FaultPlan(query: [("stal", "0"), ("utm_source", "push"), ("delay", "5")])
        #expect(lenient.ignoredParameters == ["stal", "utm_source"] && lenient.delayMilliseconds == 5)
        #expect(try FaultPlan(query: [("n", "7"), ("_cache", "x"), ("shared", "1")]).passthroughQuery.count == 3)
    }

    @Test func parsesTheRedirectStatusAndTheErrorBody() throws {
        #expect(try FaultPlan(query: []).redirectCode == 302)
        let plan = try FaultPlan(query: [
            ("redirect", "2"), ("code", "308"), ("status", "404"), ("status-body", "asset"),
        ])
        #expect(plan.redirectCode == 308 && plan.statusBodyIsAsset)
        #expect(plan.passthroughQuery.map(\.0) == ["code", "status", "status-body"], "the code rides the chain")
        for bad in ["200", "400", "abc", "-301"] {
            #expect(throws: FaultPlanError.self, "code=\(bad)") { try FaultPlan(query: [("code", bad)]) }
        }
        #expect(throws: FaultPlanError.self) { try FaultPlan(query: [("status-body", "file")]) }
    }

    @Test(arguments: [301, 303, 307, 308, 300, 304])
    func answersRedirectsWithTheRequestedStatus(code: Int) async throws {
        let server = try AssetServer(root: Fixtures.assets)
        defer { server.stop() }
        let port = server.httpPort
        let answer = try await offThePool { try RawHTTP.get("/hero.jpg?redirect=2&code=\(code)", port: port) }
        #expect(answer?.status == code)
        let location = answer?.headers.first { $0.key.lowercased() == "location" }?.value
        #expect(location == "/hero.jpg?code=\(code)&redirect=1")
    }

    /// A CDN ignores the query parameters it does not use (cache busters, `utm_*`, signatures): so does
    /// the server, by default; `--strict-faults` refuses them, so a typo is caught.
    @Test func ignoresAnUnknownParameterAsACDNDoesAndRefusesItWhenStrict() async throws {
        let lenient = try AssetServer(root: Fixtures.assets)
        defer { lenient.stop() }
        let lenientPort = lenient.httpPort
        let asset = try Fixtures.bytes(ofAsset: "hero.jpg")
        let ignored = try await offThePool {
            try RawHTTP.get("/hero.jpg?utm_source=push&sig=abc&delay=10", port: lenientPort)
        }
        #expect(ignored?.status == 200 && ignored?.body == asset)
        let server = try AssetServer(root: Fixtures.assets, strictFaults: true)
        defer { server.stop() }
        let port = server.httpPort
        let unknown = try await offThePool { try RawHTTP.get("/hero.jpg?stal=0", port: port) }
        #expect(unknown?.status == 400)
        #expect(unknown?.text.contains("unknown fault parameter 'stal'") == true)
        for name in FaultPlan.knownParameters {
            #expect(unknown?.text.contains(name) == true, "lists \(name)")
        }
        let tagged = try await offThePool { try RawHTTP.get("/hero.jpg?n=3&_cache=1", port: port) }
        #expect(tagged?.status == 200, "tags that only make a URL distinct are ignored")
    }

    @Test func logsEveryRequestWithStatusBytesAndTime() async throws {
        let entries = Mutex<[AccessLogEntry]>([])
        let server = try AssetServer(
            root: Fixtures.assets, accessLog: { entry in entries.withLock { $0.append(entry) } })
        defer { server.stop() }
        let port = server.httpPort
        _ = try await offThePool {
            (
                try RawHTTP.get("/hero.jpg", port: port), try RawHTTP.get("/missing.jpg", port: port),
                try RawHTTP.get("/hero.jpg?stal=0", port: port), try RawHTTP.get("/hero.jpg?delay=200", port: port)
            )
        }
        // Each entry is written when its request ends, just after the client has the last byte.
        let deadline = ContinuousClock.now + .seconds(5)
        while entries.withLock({ $0.count }) < 4 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let logged = entries.withLock { $0 }
        let asset = try Fixtures.bytes(ofAsset: "hero.jpg")
        #expect(logged.map(\.target) == ["/hero.jpg", "/missing.jpg", "/hero.jpg?stal=0", "/hero.jpg?delay=200"])
        #expect(logged.map(\.status) == [200, 404, 200, 200], "an unknown parameter is ignored")
        #expect(logged[2].ignoredParameters == ["stal"] && logged[2].line.hasSuffix("(ignored: stal)"))
        #expect(logged.allSatisfy { $0.method == "GET" })
        #expect(logged.first?.bytes == UInt64(asset.count))
        #expect(logged.last.map { $0.milliseconds >= 190 } == true, "the delay is part of the time")
        #expect(logged.first?.line.hasPrefix("GET /hero.jpg 200 \(asset.count) bytes ") == true)
    }

    @Test func serveCommandPrintsOneAccessLogLinePerRequest() async throws {
        let serve = try await ServeProcess.start(arguments: ["--access-log"])
        let port = serve.port
        _ = try await offThePool { (try RawHTTP.get("/hero.jpg", port: port), try RawHTTP.get("/nope", port: port)) }
        try await Task.sleep(for: .milliseconds(300))
        let run = await serve.stop()
        let size = try Fixtures.bytes(ofAsset: "hero.jpg").count
        #expect(run.status == 130, "Ctrl-C ends serve as an interruption, like every command")
        #expect(run.stderr.contains("richpush: GET /hero.jpg 200 \(size) bytes "))
        #expect(run.stderr.contains("richpush: GET /nope 404 "))
    }

    /// The HTTP status of GET `path` (plain HTTP, redirects not followed).
    static func status(of path: String, on server: AssetServer? = nil) async throws -> Int {
        let own = server == nil ? try Fixtures.startServer() : nil
        defer { own?.stop() }
        let target = try #require(server ?? own)
        let engine = try FetchEngine(loops: 1)
        defer { engine.shutdown() }
        var policy = FetchPolicy()
        policy.allowHTTP = true
        policy.maxRedirects = 0
        let request = FetchRequest(url: target.httpBaseURL + path, budget: .seconds(60), policy: policy)
        do throws(FetchError) {
            return try await engine.fetch(request, writingTo: -1).httpStatus
        } catch {
            return error.details?.httpStatus ?? -1
        }
    }
}
