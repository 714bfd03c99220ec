import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// The `curl -v` style trace of one download: what it holds, that it is escaped and bounded, and that
/// it is only kept when asked for.
@Suite struct FetchTraceTests {
    let rig: LocalRig

    init() throws { rig = try LocalRig(loops: 1) }

    func fetch(_ url: String, tracing: Bool = true) async throws -> FetchResult {
        var policy = Fixtures.fetchPolicy(mapping: rig.server)
        policy.tracesTransfer = tracing
        policy.allowHTTP = true
        return try await rig.engine.fetch(FetchRequest(url: url, budget: .seconds(60), policy: policy), writingTo: -1)
    }

    @Test func traceShowsAddressTLSCertificateHeadersAndTimings() async throws {
        defer { rig.cleanUp() }
        let result = try await fetch("https://cdn.example.com/hero.jpg")
        let lines = try #require(result.trace).rendered
        let text = lines.joined(separator: "\n")
        let port = rig.server.httpsPort ?? 0
        #expect(text.contains("127.0.0.1"), "\(text)")
        #expect(lines.contains { $0.hasPrefix("* Address: 127.0.0.1 port \(port)") }, "\(text)")
        #expect(lines.contains { $0.hasPrefix("* SSL connection using TLSv1.") }, "\(text)")
        #expect(lines.contains { $0.hasPrefix("* ALPN") }, "\(text)")
        #expect(text.contains("subject: CN=localhost") && text.contains("issuer: CN=richpush test CA"), "\(text)")
        #expect(text.contains("expire date:"), "\(text)")
        #expect(lines.contains("> GET /hero.jpg HTTP/1.1"), "\(text)")
        #expect(lines.contains("> Host: cdn.example.com"), "\(text)")
        #expect(lines.contains { $0.hasPrefix("< HTTP/1.1 200") }, "\(text)")
        #expect(lines.contains { $0.lowercased().hasPrefix("< content-type: image/jpeg") }, "\(text)")
        #expect(lines.last?.hasPrefix("* Times: dns ") == true, "\(text)")
        #expect(lines.last?.contains("total") == true)
        #expect(try await fetch("https://cdn.example.com/hero.jpg", tracing: false).trace == nil)
    }

    @Test func aFailedDownloadKeepsItsTraceInTheDetails() async throws {
        defer { rig.cleanUp() }
        var policy = Fixtures.fetchPolicy(mapping: rig.server)
        policy.tracesTransfer = true
        policy.caFile = nil
        let request = FetchRequest(url: "https://cdn.example.com/hero.jpg", budget: .seconds(60), policy: policy)
        do throws(FetchError) {
            _ = try await rig.engine.fetch(request, writingTo: -1)
            Issue.record("an untrusted certificate was accepted")
        } catch {
            let text = (error.details?.trace?.rendered ?? []).joined(separator: "\n")
            #expect(text.contains("SSL certificate problem"), "\(text)")
        }
    }

    @Test func traceFromAnUntrustedServerIsEscapedAndBounded() async throws {
        defer { rig.cleanUp() }
        // A server that sends a header with an escape sequence, then far more headers than the trace keeps.
        let filler = (0..<3000).map { ("X-Filler-\($0)", String(repeating: "a", count: 40)) }
        let server = try ScriptedHTTPServer(limit: 1) { _ in
            .init(status: 200, headers: [("X-Evil", "\u{1B}[31mred")] + filler, body: "ok")
        }
        let result = try await fetch("http://127.0.0.1:\(server.port)/x")
        let trace = try #require(result.trace)
        let lines = trace.rendered
        #expect(lines.contains { $0.contains("X-Evil: \\u{1B}[31mred") }, "\(lines.prefix(20))")
        #expect(!lines.contains { $0.unicodeScalars.contains { $0.value < 0x20 } })
        #expect(trace.truncated)
        #expect(lines.count <= 400 + 4, "the trace keeps at most 400 lines of libcurl's, then its summary")
        #expect(lines.reduce(0) { $0 + $1.utf8.count } < 200_000)
    }
}
