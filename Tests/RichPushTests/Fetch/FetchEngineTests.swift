import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// The fetch engine against the embedded asset server: every fault mode, cap and scheme rule.
///
/// Elapsed-time bounds are the events a failure must come before: a deadline, a stall or a
/// cancellation ends a transfer before the server's own answer (or the budget) would have.
@Suite struct FetchEngineTests {
    let rig: LocalRig
    var server: AssetServer { rig.server }
    var engine: FetchEngine { rig.engine }
    var folder: String { rig.folder }

    init() throws {
        // Messages spell settings as the command line does, as users read them.
        useCommandLineSpelling()
        rig = try LocalRig()
    }

    /// A policy that trusts the test CA and maps the sample host to the local HTTPS port.
    var policy: FetchPolicy { Fixtures.fetchPolicy(mapping: server) }

    var https: String { server.httpsBaseURL ?? "" }

    /// Fetches into a new file; returns the result or the error, and the file's bytes. The default
    /// budget is one the suite's start-up load cannot exhaust; tests about deadlines pass their own.
    func fetch(_ url: String, budget: Duration = .seconds(60), policy: FetchPolicy? = nil) async -> (
        Result<FetchResult, FetchError>, [UInt8]?
    ) {
        let path = folder + "/" + UUID().uuidString
        let request = FetchRequest(url: url, budget: budget, policy: policy ?? self.policy)
        do throws(FetchError) {
            let result = try await engine.fetch(request, toNewFileAt: path)
            return (.success(result), Array((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()))
        } catch {
            return (.failure(error), FileManager.default.contents(atPath: path).map { Array($0) })
        }
    }

    @discardableResult
    func expectFailure(
        _ url: String, _ code: FetchError.Code, budget: Duration = .seconds(60), policy: FetchPolicy? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> FetchError? {
        let (result, file) = await fetch(url, budget: budget, policy: policy)
        #expect(file == nil, "a failed fetch must leave no file", sourceLocation: sourceLocation)
        switch result {
        case .success(let value):
            Issue.record("expected \(code), got success with \(value.bytes) bytes", sourceLocation: sourceLocation)
            return nil
        case .failure(let error):
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            return error
        }
    }

    /// The trust store is read when a TLS connection first needs it: an http download never reads
    /// the system bundle, and one that curl redirects to https reads it in the handshake and verifies.
    @Test func readsTheTrustStoreOnlyWhenAConnectionNeedsIt() async throws {
        defer { cleanUp() }
        // A trust source of this test's own (a copy of the test CA as the "system" bundle), so the
        // count is not another test's.
        let store = folder + "/own-bundle.pem"
        try FileManager.default.copyItem(atPath: Fixtures.caFile, toPath: store)
        var policy = self.policy
        policy.allowHTTP = true
        policy.systemCAFile = store
        policy.caFile = nil
        policy.hostMappings.append(
            HostMapping(host: "cdn.example.com", port: "80", targetHost: "127.0.0.1", targetPort: "\(server.httpPort)"))
        let (plain, _) = await fetch("http://cdn.example.com/hero.jpg", policy: policy)
        #expect((try? plain.get())?.httpStatus == 200)
        #expect(FetchEngine.trustStoreBuilds(for: policy) == 0, "an http download reads no certificate")
        let (redirected, file) = await fetch(
            "http://cdn.example.com/hero.jpg?to=https://cdn.example.com/hero.jpg", policy: policy)
        let result = try redirected.get()
        #expect(result.httpStatus == 200)
        #expect(result.redirectCount == 1)
        #expect(file == (try Fixtures.bytes(ofAsset: "hero.jpg")))
        #expect(FetchEngine.trustStoreBuilds(for: policy) == 1)
    }

    func cleanUp() { rig.cleanUp() }

    @Test func downloadsOverHTTPSWithTheSampleHostMapped() async throws {
        defer { cleanUp() }
        let (result, file) = await fetch("https://cdn.example.com/hero.jpg")
        let value = try result.get()
        #expect(value.httpStatus == 200)
        #expect(value.contentType == "image/jpeg")
        #expect(value.effectiveURL == "https://cdn.example.com/hero.jpg")
        #expect(value.bytes == Int64(try Fixtures.bytes(ofAsset: "hero.jpg").count))
        #expect(file == (try Fixtures.bytes(ofAsset: "hero.jpg")))
        let t = value.timings
        #expect(t.connect > .zero && t.connect <= t.tls && t.tls <= t.firstByte && t.firstByte <= t.total)
    }

    @Test func refusesAnUntrustedCertificate() async {
        defer { cleanUp() }
        var untrusting = policy
        untrusting.caFile = nil
        await expectFailure("https://cdn.example.com/hero.jpg", .tlsFailed, policy: untrusting)
    }

    @Test func refusesHTTPUnlessAllowed() async throws {
        defer { cleanUp() }
        await expectFailure(server.httpBaseURL + "/hero.jpg", .schemeNotAllowed)
        var allowing = policy
        allowing.allowHTTP = true
        let (result, _) = await fetch(server.httpBaseURL + "/hero.jpg", policy: allowing)
        #expect(try result.get().httpStatus == 200)
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/x", "dict://127.0.0.1/x"])
    func refusesOtherSchemes(url: String) async {
        defer { cleanUp() }
        var allowing = policy
        allowing.allowHTTP = true
        await expectFailure(url, .schemeNotAllowed, policy: allowing)
    }

    @Test func rejectsAMalformedURL() async {
        defer { cleanUp() }
        await expectFailure("not a url", .invalidURL)
    }

    /// CFNetwork's limit (20 since iOS 14 and macOS 11) is the default.
    @Test func followsUpToTwentyRedirectsAsURLSession() async throws {
        defer { cleanUp() }
        #expect(FetchPolicy().maxRedirects == 20)
        let (result, _) = await fetch("https://cdn.example.com/hero.jpg?redirect=20")
        #expect(try result.get().redirectCount == 20)
        let error = await expectFailure("https://cdn.example.com/hero.jpg?redirect=21", .tooManyRedirects)
        #expect(error?.message.contains("more than 20 times") == true, "\(String(describing: error))")
    }

    /// 301, 302, 303, 307 and 308 are followed (every hop a GET: a download task sends nothing else).
    @Test(arguments: [301, 302, 303, 307, 308])
    func followsTheRedirectStatusesURLSessionFollows(code: Int) async throws {
        defer { cleanUp() }
        let (result, file) = await fetch("https://cdn.example.com/hero.jpg?redirect=2&code=\(code)")
        let fetched = try result.get()
        #expect(fetched.redirectCount == 2)
        #expect(fetched.httpStatus == 200)
        #expect(file == (try Fixtures.bytes(ofAsset: "hero.jpg")))
        #expect(server.requestCount == 3, "two redirects, then the asset")
    }

    /// 300, 304 and 305 carry a Location URLSession does not follow: the task ends with that response
    /// (libcurl, left to itself, follows every 3xx with a Location).
    @Test(arguments: [300, 304, 305])
    func endsOnRedirectStatusesURLSessionDoesNotFollow(code: Int) async throws {
        defer { cleanUp() }
        let error = await expectFailure("https://cdn.example.com/hero.jpg?redirect=1&code=\(code)", .httpStatus)
        #expect(error?.details?.httpStatus == code)
        #expect(error?.message.contains("does not follow") == true, "\(String(describing: error))")
        #expect(server.requestCount == 1, "the Location is never requested")
    }

    @Test func refusesARedirectToAFileURL() async {
        defer { cleanUp() }
        var allowing = policy
        allowing.allowHTTP = true
        await expectFailure(
            "https://cdn.example.com/hero.jpg?to=file:///etc/passwd", .redirectNotAllowed, policy: allowing)
    }

    @Test func refusesARedirectFromHTTPSToHTTPUnderATS() async {
        defer { cleanUp() }
        let target = server.httpBaseURL + "/hero.jpg"
        await expectFailure("https://cdn.example.com/hero.jpg?to=\(target)", .redirectNotAllowed)
    }

    @Test func enforcesTheDeadlineOnASlowServer() async {
        defer { cleanUp() }
        let started = ContinuousClock.now
        await expectFailure(
            "https://cdn.example.com/hero.jpg?delay=60000", .deadlineExceeded, budget: .milliseconds(700))
        #expect(ContinuousClock.now - started < .seconds(60), "ended before the server's 60 s answer")
    }

    @Test func enforcesTheDeadlineOnATricklingServer() async throws {
        defer { cleanUp() }
        // At 100 bytes a second, the whole body would take this long.
        let trickle = Duration.seconds(try Fixtures.bytes(ofAsset: "hero.jpg").count / 100)
        let started = ContinuousClock.now
        let error = await expectFailure(
            "https://cdn.example.com/hero.jpg?rate=100", .deadlineExceeded, budget: .milliseconds(1500))
        #expect((error?.details?.bytes ?? 0) > 0, "some bytes arrived before the deadline")
        #expect(ContinuousClock.now - started < trickle, "ended before the \(trickle) trickle could end")
    }

    @Test func detectsAStallWhenStallDetectionIsOn() async {
        defer { cleanUp() }
        var stalling = policy
        stalling.stallWindow = .seconds(1)
        let started = ContinuousClock.now
        await expectFailure(
            "https://cdn.example.com/hero.jpg?stall=0", .stalled, budget: .seconds(60), policy: stalling)
        #expect(ContinuousClock.now - started < .seconds(60), "ended before the budget")
    }

    @Test func refusesADeclaredLengthOverTheCap() async {
        defer { cleanUp() }
        var capped = policy
        capped.maxBytes = 1000
        await expectFailure("https://cdn.example.com/hero.jpg", .tooLarge, policy: capped)
    }

    @Test(arguments: ["chunked=1", "endless=1", "chunked=1&size=5000000"])
    func countsBytesAgainstTheCapWhenNoLengthIsDeclared(fault: String) async {
        defer { cleanUp() }
        var capped = policy
        capped.maxBytes = 1000
        let error = await expectFailure("https://cdn.example.com/hero.jpg?\(fault)", .tooLarge, policy: capped)
        #expect((error?.details?.bytes ?? .max) <= 1000)
    }

    @Test func stopsAnEndlessBodyAtTheCapWithinTheBudget() async {
        defer { cleanUp() }
        var capped = policy
        capped.maxBytes = 5_000_000
        let error = await expectFailure("https://cdn.example.com/hero.jpg?endless=1", .tooLarge, policy: capped)
        #expect((error?.details?.bytes ?? .max) <= 5_000_000)
    }

    @Test(arguments: [404, 403, 500, 503])
    func reportsAnErrorStatus(status: Int) async {
        defer { cleanUp() }
        let error = await expectFailure("https://cdn.example.com/hero.jpg?status=\(status)", .httpStatus)
        #expect(error?.details?.httpStatus == status)
    }

    @Test func reportsAMissingAsset() async {
        defer { cleanUp() }
        let error = await expectFailure("https://cdn.example.com/missing.jpg", .httpStatus)
        #expect(error?.details?.httpStatus == 404)
    }

    @Test(arguments: ["truncate=1000", "length=100000"])
    func reportsATruncatedBody(fault: String) async {
        defer { cleanUp() }
        await expectFailure("https://cdn.example.com/hero.jpg?\(fault)", .truncated)
    }

    /// A Content-Length shorter than the file is indistinguishable from a short file: curl stops there.
    @Test func takesAShortLyingLengthAtItsWord() async throws {
        defer { cleanUp() }
        let (result, file) = await fetch("https://cdn.example.com/hero.jpg?length=100")
        #expect(try result.get().bytes == 100)
        #expect(file == Array(try Fixtures.bytes(ofAsset: "hero.jpg").prefix(100)))
    }

    @Test(arguments: ["reset=0", "reset=1000"])
    func reportsAConnectionReset(fault: String) async {
        defer { cleanUp() }
        var allowing = policy
        allowing.allowHTTP = true
        await expectFailure(server.httpBaseURL + "/hero.jpg?\(fault)", .connectionReset, policy: allowing)
    }

    /// A pre-compressed object (the server says gzip whatever was asked) is decoded before it is stored,
    /// as URLSession does; the report keeps the coding and the compressed size.
    @Test func decodesAGzipBodyBeforeItIsStored() async throws {
        defer { cleanUp() }
        let (result, file) = await fetch("https://cdn.example.com/hero.jpg?gzip=1&size=2000000")
        let value = try result.get()
        #expect(value.contentEncoding == "gzip")
        #expect(value.bytes == 2_000_000, "the decoded bytes")
        #expect(value.wireBytes > 0 && value.wireBytes < 100_000, "the compressed bytes: \(value.wireBytes)")
        let hero = try Fixtures.bytes(ofAsset: "hero.jpg")
        #expect(file?.count == 2_000_000 && file?.prefix(hero.count).elementsEqual(hero) == true)
        #expect(value.httpVersion == "1.1", "the asset server speaks HTTP/1.1 only")
    }

    /// The cap counts decoded bytes: a gzip body of a few kilobytes that inflates to 60 MB stops at it.
    @Test func stopsADecodingBombAtTheCap() async throws {
        defer { cleanUp() }
        var capped = policy
        capped.maxBytes = 1_000_000
        let error = await expectFailure(
            "https://cdn.example.com/hero.jpg?gzip=1&size=60000000", .tooLarge, policy: capped)
        let details = try #require(error?.details)
        #expect(details.bytes <= 1_000_000, "\(details.bytes)")
        #expect(details.wireBytes < 100_000, "stopped long before the body ended: \(details.wireBytes)")
    }

    /// With no coding asked for, the body is kept as sent.
    @Test func keepsTheBodyAsSentWhenNoCodingIsAskedFor() async throws {
        defer { cleanUp() }
        var raw = policy
        raw.acceptEncoding = nil
        let (result, file) = await fetch("https://cdn.example.com/hero.jpg?gzip=1&size=2000000", policy: raw)
        let value = try result.get()
        #expect(value.bytes == value.wireBytes && value.bytes < 100_000)
        #expect(file?.prefix(2) == [0x1f, 0x8b])
    }

    /// A plain body's wire bytes are its stored bytes.
    @Test func reportsEqualWireAndStoredBytesForAPlainBody() async throws {
        defer { cleanUp() }
        let value = try await fetch("https://cdn.example.com/hero.png").0.get()
        #expect(value.bytes == Int64(try Fixtures.bytes(ofAsset: "hero.png").count))
        #expect(value.wireBytes == value.bytes && value.contentEncoding == nil)
    }

    @Test func reportsTheContentTypeTheServerSent() async throws {
        defer { cleanUp() }
        let (result, _) = await fetch("https://cdn.example.com/hero.jpg?type=text/html")
        #expect(try result.get().contentType == "text/html")
    }

    @Test func reportsARefusedConnection() async throws {
        defer { cleanUp() }
        let port = try ClosedPort()
        await expectFailure("https://127.0.0.1:\(port.number)/hero.jpg", .connectFailed)
    }

    @Test func timesOutAHandshakeThatNeverHappens() async throws {
        defer { cleanUp() }
        let silent = try SilentListener()
        defer { silent.close() }
        var quick = policy
        quick.connectTimeout = .milliseconds(500)
        let started = ContinuousClock.now
        await expectFailure("https://127.0.0.1:\(silent.port)/hero.jpg", .connectTimeout, policy: quick)
        #expect(ContinuousClock.now - started < .seconds(60), "ended before the budget")
    }

    @Test func reportsAReplyThatIsNotHTTP() async throws {
        defer { cleanUp() }
        let banner = try BannerServer()
        defer { banner.close() }
        var allowing = policy
        allowing.allowHTTP = true
        await expectFailure("http://127.0.0.1:\(banner.port)/hero.jpg", .protocolError, policy: allowing)
    }

    /// libcurl adds connect times over a redirect chain; a hop that never connects is still a connect timeout.
    @Test func timesOutAHandshakeAfterARedirect() async throws {
        defer { cleanUp() }
        let silent = try SilentListener()
        defer { silent.close() }
        var quick = policy
        quick.connectTimeout = .milliseconds(500)
        let target = "https://127.0.0.1:\(silent.port)/hero.jpg"
        await expectFailure("https://cdn.example.com/hero.jpg?to=\(target)", .connectTimeout, policy: quick)
    }

    @Test func cancellingTheTaskAbortsTheTransfer() async throws {
        defer { cleanUp() }
        let started = ContinuousClock.now
        let task = Task { await fetch("https://cdn.example.com/hero.jpg?delay=60000", budget: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        let (result, file) = await task.value
        #expect(throws: FetchError.self) { try result.get() }
        if case .failure(let error) = result { #expect(error.code == .cancelled) }
        #expect(file == nil)
        #expect(ContinuousClock.now - started < .seconds(60), "ended before the server's 60 s answer")
    }

    @Test func shuttingDownEndsTransfersInFlight() async throws {
        defer { cleanUp() }
        let task = Task { await fetch("https://cdn.example.com/hero.jpg?delay=60000", budget: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(300))
        engine.shutdown()
        let (result, _) = await task.value
        #expect(throws: FetchError.self) { try result.get() }
        if case .failure(let error) = result { #expect(error.code == .engineStopped) }
        let (after, _) = await fetch("https://cdn.example.com/hero.jpg")
        if case .failure(let error) = after {
            #expect(error.code == .engineStopped)
        } else {
            Issue.record("fetched after shutdown")
        }
    }

    @Test(arguments: [FetchPolicy.Connections.fresh, .shared])
    func completesHundredsOfConcurrentTransfers(connections: FetchPolicy.Connections) async throws {
        defer { cleanUp() }
        var parallel = policy
        parallel.connections = connections
        let expected = Int64(try Fixtures.bytes(ofAsset: "hero.png").count)
        let count = 300
        let engine = self.engine
        let shared = parallel
        let results = await withTaskGroup(of: Result<FetchResult, FetchError>.self) { group in
            for _ in 0..<count {
                group.addTask {
                    let request = FetchRequest(
                        url: "https://cdn.example.com/hero.png", budget: .seconds(60), policy: shared)
                    do throws(FetchError) { return .success(try await engine.fetch(request, writingTo: -1)) } catch {
                        return .failure(error)
                    }
                }
            }
            var all: [Result<FetchResult, FetchError>] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.count == count)
        let bytes = results.compactMap { try? $0.get().bytes }
        #expect(
            bytes.count == count,
            "\(results.compactMap { if case .failure(let e) = $0 { e.description } else { nil } }.prefix(3))")
        #expect(bytes.allSatisfy { $0 == expected })
    }

    @Test func refusesADataURLForItsScheme() async {
        defer { cleanUp() }
        await expectFailure("data:image/png;base64,iVBORw0KGgo=", .schemeNotAllowed)
        await expectFailure("data:,hello", .schemeNotAllowed)
    }

    @Test func refusesARedirectToADataURL() async {
        defer { cleanUp() }
        let error = await expectFailure("https://cdn.example.com/hero.jpg?to=data:,hello", .redirectNotAllowed)
        #expect(error?.message.contains("data:,hello") == true)
    }

    /// The trust semantics of `--cacert`: the system bundle is always trusted, the extra CA besides it.
    @Test func trustsTheSystemBundleAndTheExtraCATogether() async throws {
        defer { cleanUp() }
        let system = try #require(FetchPolicy.defaultSystemCAFile)
        let url = "https://cdn.example.com/hero.jpg"
        // The system store alone does not know the test CA.
        var systemOnly = policy
        systemOnly.caFile = nil
        systemOnly.systemCAFile = system
        let refused = await expectFailure(url, .tlsFailed, policy: systemOnly)
        #expect(refused?.tlsProblem == .unknownIssuer)
        #expect(refused?.hint?.contains("CA file") == true)
        // The test CA alone, as the whole store.
        var testCAOnly = policy
        testCAOnly.caFile = nil
        testCAOnly.systemCAFile = Fixtures.caFile
        #expect(try await fetch(url, policy: testCAOnly).0.get().httpStatus == 200)
        // The system store again, on the same loops: a store is never carried over to another source.
        await expectFailure(url, .tlsFailed, policy: systemOnly)
        // Both: the system bundle plus --cacert.
        var both = policy
        both.systemCAFile = system
        #expect(try await fetch(url, policy: both).0.get().httpStatus == 200)
        // A production-sized store that holds the test CA among the system's.
        let bundle = folder + "/bundle.pem"
        let combined =
            try String(contentsOfFile: system, encoding: .utf8) + "\n"
            + String(contentsOfFile: Fixtures.caFile, encoding: .utf8)
        try combined.write(toFile: bundle, atomically: true, encoding: .utf8)
        var production = policy
        production.caFile = nil
        production.systemCAFile = bundle
        #expect(try await fetch(url, policy: production).0.get().httpStatus == 200)
    }

    @Test func buildsTheTrustStoreOnceNotPerConnection() async throws {
        defer { cleanUp() }
        // A trust source of this test's own (a copy of the test CA), so no other test builds it.
        let ca = folder + "/own-ca.pem"
        try FileManager.default.copyItem(atPath: Fixtures.caFile, toPath: ca)
        var ownPolicy = policy
        ownPolicy.caFile = ca
        let own = ownPolicy
        #expect(FetchEngine.trustStoreBuilds(for: own) == 0)
        let statuses = await withTaskGroup(of: Int.self) { tasks in
            for _ in 0..<24 {
                tasks.addTask {
                    (try? await self.fetch("https://cdn.example.com/hero.jpg", policy: own).0.get())?.httpStatus ?? 0
                }
            }
            return await tasks.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 24))
        #expect(FetchEngine.trustStoreBuilds(for: own) == 1, "one store for 24 fresh connections on two loops")
    }

    @Test func saysWhichCertificateFileCannotBeRead() async throws {
        defer { cleanUp() }
        var broken = policy
        broken.caFile = folder + "/missing.pem"
        let error = await expectFailure("https://cdn.example.com/hero.jpg", .tlsFailed, policy: broken)
        #expect(error?.message.contains("missing.pem") == true)
    }
}
