import AssetServer
import Foundation
import TestSupport
import Testing

/// `richpush fetch` run as a separate process: output, exit codes, and its memory.
@Suite struct FetchCommandTests {
    let server: AssetServer

    init() throws {
        server = try Fixtures.startServer()
    }

    var mapping: [String] {
        ["--cacert", Fixtures.caFile, "--connect-to", "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)"]
    }

    func json(_ text: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(object as? [String: Any])
    }

    @Test func printsTheDownloadAsJSONAndStoresTheBody() async throws {
        defer { server.stop() }
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let output = folder + "/hero.png"
        let run = try await RichPushBinary.run(["fetch", "https://cdn.example.com/hero.png", "-o", output] + mapping)
        #expect(run.status == 0, "\(run.stderr)")
        let report = try json(run.stdout)
        #expect(report["ok"] as? Bool == true)
        let download = try #require(report["download"] as? [String: Any])
        #expect(download["status"] as? Int == 200)
        #expect(download["bytes"] as? Int == (try Fixtures.bytes(ofAsset: "hero.png").count))
        #expect(((download["timings_ms"] as? [String: Any])?["total"] as? Double ?? 0) > 0)
        #expect(OutputSchemas.violations(of: run.stdout, against: "fetch-report") == [])
        #expect(FileManager.default.contents(atPath: output) == Data(try Fixtures.bytes(ofAsset: "hero.png")))
        #expect(Fixtures.files(in: folder) == ["hero.png"], "no .part file left")
        #expect(run.stderr.contains("HTTP 200"))
    }

    @Test func reportsAFailureWithItsCodeAndExitsOne() async throws {
        defer { server.stop() }
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try await RichPushBinary.run(
            ["fetch", "https://cdn.example.com/hero.jpg?truncate=500", "-o", folder + "/x.jpg"] + mapping)
        #expect(run.status == 1)
        let report = try json(run.stdout)
        #expect(report["ok"] as? Bool == false)
        #expect(report["reason"] as? String == "truncated")
        #expect(OutputSchemas.violations(of: run.stdout, against: "fetch-report") == [])
        #expect(Fixtures.files(in: folder).isEmpty, "a failed download leaves no file")
    }

    @Test func refusesPlainHTTPWithoutAllowHTTP() async throws {
        defer { server.stop() }
        let run = try await RichPushBinary.run(["fetch", server.httpBaseURL + "/hero.jpg"])
        #expect(run.status == 1)
        #expect(try json(run.stdout)["reason"] as? String == "scheme-not-allowed")
        #expect(OutputSchemas.violations(of: run.stdout, against: "fetch-report") == [])
        let allowed = try await RichPushBinary.run(["fetch", server.httpBaseURL + "/hero.jpg", "--allow-http"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
    }

    @Test(arguments: [
        ["fetch"], ["fetch", "a", "b"], ["fetch", "x", "--budget", "soon"], ["fetch", "x", "--bogus"],
        ["fetch", "x", "--connect-to", "nonsense"], ["no-such-command"],
    ])
    func rejectsBadUsageWithExitCode64(arguments: [String]) async throws {
        defer { server.stop() }
        let run = try await RichPushBinary.run(arguments)
        #expect(run.status == 64, "\(run.stderr)")
        #expect(!run.stderr.isEmpty)
        #expect(run.stdout.isEmpty)
    }

    @Test func repeatsADownloadAndSummarizesThroughput() async throws {
        defer { server.stop() }
        let run = try await RichPushBinary.run(
            ["fetch", "https://cdn.example.com/hero.jpg", "--repeat", "40", "--parallel", "8"] + mapping)
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try json(run.stdout)
        #expect(summary["downloads"] as? Int == 40)
        #expect(summary["succeeded"] as? Int == 40)
        #expect((summary["downloads_per_second"] as? Double ?? 0) > 0)
        #expect((summary["latency_ms"] as? [String: Any])?["p99"] is Double)
    }

    /// The body streams to disk: a 50 MB download raises peak memory by only a few MB over a 4 KB one.
    ///
    /// Peak memory comes from GNU time, which forks the binary from its own small process: a child
    /// spawned from this (large, multi-threaded) test process would report this process's peak.
    @Test(.disabled(if: Sanitizer.isActive, "AddressSanitizer's quarantine inflates peak memory"))
    func streamsALargeBodyWithConstantMemory() async throws {
        defer { server.stop() }
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let small = try await RichPushBinary.measured(
            ["fetch", "https://cdn.example.com/hero.jpg", "-o", folder + "/a"] + mapping)
        let large = try await RichPushBinary.measured(
            ["fetch", "https://cdn.example.com/hero.jpg?size=50000000", "-o", folder + "/b", "--budget", "120"]
                + mapping)
        #expect(small.run.status == 0 && large.run.status == 0, "\(large.run.stderr)")
        #expect((try json(large.run.stdout)["download"] as? [String: Any])?["bytes"] as? Int == 50_000_000)
        let growth = large.peakBytes - small.peakBytes
        #expect(small.peakBytes > 0 && growth < 6_000_000, "peak memory grew by \(growth) bytes for a 50 MB download")
        print("fetch peak RSS: 4 KB body \(small.peakBytes / 1024) KiB, 50 MB body \(large.peakBytes / 1024) KiB")
    }
}
