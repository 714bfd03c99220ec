import Foundation
import RichPush
import TestSupport
import Testing

/// An answer whose headers pass libcurl's 100 KB limit, from a CDN and from an SDK's endpoint.
extension HostileInputTests {
    /// 200 KB of one header: libcurl 7.88 gives up with CURLE_OUT_OF_MEMORY, which richpush reported as
    /// "Out of memory"; it is the server's fault and is said so, with the limit.
    static func hugeHeaderServer() throws -> ScriptedHTTPServer {
        try ScriptedHTTPServer(limit: 8) { _ in
            .init(status: 200, headers: [("X-Padding", String(repeating: "a", count: 200_000))], body: "ok")
        }
    }

    @Test func aDownloadWithHugeHeadersIsTheServersFault() async throws {
        let server = try Self.hugeHeaderServer()
        defer { server.close() }
        let run = try await RichPushBinary.run(["fetch", server.baseURL + "/a.jpg", "--allow-http"])
        let report = try JSONValue.parse(Array(run.stdout.utf8))
        #expect(report["reason"] == .string("protocol-error"), "\(run.stdout)")
        #expect(run.stderr.contains("response headers over 100 KB"), "\(run.stderr)")
        #expect(!run.stderr.lowercased().contains("out of memory"), "\(run.stderr)")
    }

    @Test func anSDKEndpointWithHugeHeadersIsTheServersFault() async throws {
        let server = try Self.hugeHeaderServer()
        let assets = try Fixtures.startServer()
        let folder = try Fixtures.temporaryFolder()
        defer {
            server.close()
            assets.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }
        let run = try await RichPushBinary.run(
            [
                "process", Fixtures.root + "/Samples/payloads/customerio-image.json", "--sdk", "customerio",
                "--sdk-endpoint", server.baseURL, "--out", folder,
            ] + Fixtures.sampleHost(assets))
        let calls = try JSONValue.parse(Array(run.stdout.utf8))["richpush"]?["sdk_calls"]
        let text = calls?.text ?? ""
        #expect(text.contains("response headers over 100 KB"), "\(run.stdout)")
        #expect(!text.lowercased().contains("out of memory"), "\(text)")
    }
}
