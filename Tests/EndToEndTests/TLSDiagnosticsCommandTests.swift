import AssetServer
import Foundation
import TestSupport
import Testing

/// TLS diagnostics through the binary: the exact problem in fetch's and process's JSON, a CA file
/// without certificates refused at start, and `-v`'s trace on stderr.
@Suite struct TLSDiagnosticsCommandTests {
    let server: AssetServer

    init() throws { server = try Fixtures.startServer() }

    func mapping(_ host: String = "cdn.example.com", caFile: String = Fixtures.caFile) -> [String] {
        ["--cacert", caFile, "--connect-to", "\(host):443:127.0.0.1:\(server.httpsPort ?? 0)"]
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func aHostNameMismatchIsNamedInFetchsReportWithoutTheCAFileHint() async throws {
        defer { server.stop() }
        let run = try await RichPushBinary.run(
            ["fetch", "https://cdn.example.net/hero.jpg"] + mapping("cdn.example.net"))
        #expect(run.status == 1)
        let report = try json(run.stdout)
        #expect(report["reason"] as? String == "tls-failed")
        #expect(report["tls_problem"] as? String == "hostname-mismatch")
        let hint = try #require(report["hint"] as? String)
        #expect(!hint.contains("--cacert") && !hint.contains("CA file"), "\(hint)")
        #expect((report["message"] as? String)?.contains("*.example.com") == true)
        #expect(OutputSchemas.violations(of: run.stdout, against: "fetch-report") == [])
    }

    @Test func processCarriesTheTLSProblemInItsOutcome() async throws {
        defer { server.stop() }
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let payload = folder + "/p.json"
        try
            #"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.net/hero.jpg","type":"jpg"}}}"#
            .write(toFile: payload, atomically: true, encoding: .utf8)
        let run = try await RichPushBinary.run(
            ["process", payload, "--out", folder + "/out"] + mapping("cdn.example.net"))
        #expect(run.status == 1, "\(run.stderr)")
        let outcome = try #require(try json(run.stdout)["richpush"] as? [String: Any])
        #expect(outcome["reason"] as? String == "tls-failed")
        #expect(outcome["tls_problem"] as? String == "hostname-mismatch")
        #expect(run.stderr.contains("does not hold the host name cdn.example.net"), "\(run.stderr)")
    }

    @Test(arguments: ["fetch", "process"])
    func aCAFileWithoutACertificateIsRefusedAtStartLikeAMissingOne(command: String) async throws {
        defer { server.stop() }
        let target = command == "fetch" ? ["https://cdn.example.com/hero.jpg"] : [Fixtures.root + "/README.md"]
        let empty = try await RichPushBinary.run([command] + target + mapping(caFile: Fixtures.root + "/README.md"))
        let missing = try await RichPushBinary.run([command] + target + mapping(caFile: "/nonexistent/ca.pem"))
        #expect(empty.status == 65, "\(empty.stderr)")
        #expect(missing.status == 65, "\(missing.stderr)")
        #expect(empty.stderr.contains("README.md") && empty.stderr.contains("holds no certificate"), "\(empty.stderr)")
        #expect(empty.stdout.isEmpty)
    }

    @Test(arguments: ["fetch", "process"])
    func verbosePrintsTheTraceOnStderr(command: String) async throws {
        defer { server.stop() }
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let payload = folder + "/p.json"
        try
            #"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg","type":"jpg"}}}"#
            .write(toFile: payload, atomically: true, encoding: .utf8)
        let arguments =
            command == "fetch"
            ? ["fetch", "https://cdn.example.com/hero.jpg", "-v"]
            : ["process", payload, "--out", folder + "/out", "--verbose"]
        let run = try await RichPushBinary.run(arguments + mapping())
        #expect(run.status == 0, "\(run.stderr)")
        let port = server.httpsPort ?? 0
        #expect(run.stderr.contains("* Address: 127.0.0.1 port \(port)"), "\(run.stderr)")
        #expect(run.stderr.contains("* SSL connection using TLSv1."), "\(run.stderr)")
        #expect(run.stderr.contains("issuer: CN=richpush test CA"), "\(run.stderr)")
        #expect(run.stderr.contains("> GET /hero.jpg HTTP/1.1"), "\(run.stderr)")
        #expect(run.stderr.contains("< HTTP/1.1 200"), "\(run.stderr)")
        #expect(run.stderr.contains("* Times: dns "), "\(run.stderr)")
        // stdout is untouched: the JSON (fetch) or the payload (process) only.
        #expect(!run.stdout.contains("* Times"))
        // Without the flag, no trace.
        let quiet = try await RichPushBinary.run(Array(arguments.dropLast()) + mapping())
        #expect(!quiet.stderr.contains("* Times"))
    }
}
