import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// Requests and responses as URLSession makes them, through the binary: the headers sent, a
/// pre-compressed asset decoded before it is stored, a decoding bomb stopped at Apple's cap, `-H`.
@Suite struct RequestFidelityTests {
    let server: AssetServer
    let folder: String

    init() throws {
        server = try Fixtures.startServer()
        folder = try Fixtures.temporaryFolder("richpush-request")
    }

    func cleanUp() {
        server.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    var mapping: [String] {
        Fixtures.sampleHost(server)
    }

    static func payload(_ url: String, type: String = "jpg") -> Data {
        Data(#"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"\#(url)","type":"\#(type)"}}}"#.utf8)
    }

    /// The request lines the `-v` trace shows (`> Name: value`), without the marker.
    static func sentHeaders(_ stderr: String) -> [String] {
        stderr.split(separator: "\n").filter { $0.hasPrefix("> ") }.map { String($0.dropFirst(2)) }
    }

    @Test func sendsTheHeadersAnIPhoneSends() async throws {
        defer { cleanUp() }
        let run = try await RichPushBinary.run(["fetch", "https://cdn.example.com/hero.png", "-v"] + mapping)
        #expect(run.status == 0, "\(run.stderr)")
        let sent = Self.sentHeaders(run.stderr)
        #expect(sent.contains("User-Agent: NotificationService/1 CFNetwork/1496.0.7 Darwin/23.5.0"), "\(sent)")
        #expect(sent.contains("Accept: */*"))
        #expect(sent.contains("Accept-Language: en-US,en;q=0.9"))
        #expect(sent.contains("Accept-Encoding: gzip, deflate, br"))
        #expect(run.stderr.contains("ALPN: offers h2,http/1.1"), "HTTP/2 offered as iOS does")
        let report = try JSONValue.parse(Array(run.stdout.utf8))
        #expect(report["download"]?["http_version"] == .string("1.1"), "the asset server speaks 1.1 only")
    }

    /// Credentials never reach the `-v` trace: the Basic header libcurl builds from a URL's user and
    /// password, and one given with -H, show their scheme and `[redacted]`.
    @Test func theTraceNeverShowsCredentials() async throws {
        defer { cleanUp() }
        let run = try await RichPushBinary.run(
            [
                "fetch", "https://ana:s3cret-pass@cdn.example.com/hero.png", "-v", "-H",
                "Proxy-Authorization: Bearer tok-123456789", "-H", "Cookie: session=abcdef",
            ] + mapping)
        let sent = Self.sentHeaders(run.stderr)
        #expect(sent.contains("Authorization: Basic [redacted]"), "\(sent)")
        #expect(sent.contains("Proxy-Authorization: Bearer [redacted]"), "\(sent)")
        #expect(sent.contains("Cookie: [redacted]"), "\(sent)")
        // base64("ana:s3cret-pass"), the token and the cookie appear nowhere in the trace.
        for secret in ["YW5hOnMzY3JldC1wYXNz", "tok-123456789", "session=abcdef", "s3cret-pass", "'ana'"] {
            #expect(!run.stderr.contains(secret), "\(secret) in \(run.stderr)")
            #expect(!run.stdout.contains(secret), "\(secret) in \(run.stdout)")
        }
        #expect(run.stdout.contains(#""url":"https://cdn.example.com/hero.png""#), "\(run.stdout)")
    }

    /// A URL's user name and password reach no output: not the outcome (its `url`, `effective_url`,
    /// messages), the report, stderr, nor bench's JSON, HTML and log; the payload's own member passes
    /// through as the device receives it, with the `url-credentials` warning.
    @Test func urlCredentialsReachNoOutput() async throws {
        defer { cleanUp() }
        let secret = "s3cret-pass"
        for asset in ["hero.png", "missing.png"] {
            let payloadFile = folder + "/p.json"
            try Self.payload("https://ana:\(secret)@cdn.example.com/\(asset)", type: "png").write(
                to: URL(fileURLWithPath: payloadFile))
            let report = folder + "/report-\(asset).json"
            let run = try await RichPushBinary.run(
                ["process", payloadFile, "--out", folder + "/out", "--report", report, "-v"] + mapping)
            let outcome = try JSONValue.parse(Array(run.stdout.utf8))["richpush"]
            #expect(outcome?["url"] == .string("https://cdn.example.com/\(asset)"), "\(run.stdout)")
            #expect(outcome.map { !$0.text.contains(secret) } == true, "\(run.stdout)")
            #expect(outcome.map { $0.text.contains(#""code":"url-credentials""#) } == true, "\(run.stdout)")
            #expect(!run.stderr.contains(secret) && !run.stderr.contains("ana:"), "\(run.stderr)")
            let stored = try String(contentsOfFile: report, encoding: .utf8)
            #expect(!stored.contains(secret), "\(stored)")
        }
        let outputs = ["b.json", "b.html", "b.csv"].map { folder + "/" + $0 }
        let bench = try await RichPushBinary.run(
            [
                "bench", "--url", "https://ana:\(secret)@cdn.example.com/hero.png", "--devices", "3", "--json",
                outputs[0], "--html", outputs[1], "--log", outputs[2],
            ] + mapping)
        #expect(bench.status == 0, "\(bench.stderr)")
        for text in [bench.stdout, bench.stderr] + (try outputs.map { try String(contentsOfFile: $0, encoding: .utf8) })
        {
            #expect(!text.contains(secret), "\(text)")
        }
    }

    @Test func headerOptionsAddReplaceAndRemove() async throws {
        defer { cleanUp() }
        let run = try await RichPushBinary.run(
            [
                "fetch", "https://cdn.example.com/hero.png", "-v", "-H", "Accept: image/webp,*/*", "--header",
                "X-Device: iPhone15,2", "-H", "Accept-Language:", "--user-agent", "Acme/7 CFNetwork/1 Darwin/2",
            ] + mapping)
        #expect(run.status == 0, "\(run.stderr)")
        let sent = Self.sentHeaders(run.stderr)
        #expect(sent.contains("Accept: image/webp,*/*") && !sent.contains("Accept: */*"), "\(sent)")
        #expect(sent.contains("X-Device: iPhone15,2"))
        #expect(!sent.contains { $0.hasPrefix("Accept-Language") })
        #expect(sent.contains("User-Agent: Acme/7 CFNetwork/1 Darwin/2"))
    }

    @Test func theUserAgentNamesTheServiceExtensionsBundle() async throws {
        defer { cleanUp() }
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>CFBundleName</key><string>AcmeService</string>
            <key>CFBundleVersion</key><string>42</string>
            <key>NSExtension</key><dict><key>NSExtensionPointIdentifier</key>
            <string>com.apple.usernotifications.service</string></dict>
            </dict></plist>
            """
        try FileManager.default.createDirectory(atPath: folder + "/app/Service", withIntermediateDirectories: true)
        try Data(plist.utf8).write(to: URL(fileURLWithPath: folder + "/app/Service/Info.plist"))
        let run = try await RichPushBinary.run(
            ["process", "-v", "--app", folder + "/app", "--out", folder + "/out"] + mapping,
            stdin: Self.payload("https://cdn.example.com/hero.jpg"))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            Self.sentHeaders(run.stderr).contains("User-Agent: AcmeService/42 CFNetwork/1496.0.7 Darwin/23.5.0"),
            "\(run.stderr)")
    }

    @Test func aPreCompressedAssetIsDecodedThenAttached() async throws {
        defer { cleanUp() }
        let run = try await RichPushBinary.run(
            ["process", "--out", folder + "/out"] + mapping,
            stdin: Self.payload("https://cdn.example.com/hero.jpg?gzip=1&size=1000000"))
        #expect(run.status == 0, "\(run.stderr)")
        let output = try JSONValue.parse(Array(run.stdout.utf8))
        let outcome = try #require(output["richpush"])
        #expect(OutputSchemas.violations(of: outcome.text, against: "outcome") == [])
        #expect(outcome["verdict"] == .string("attached"))
        #expect(outcome["download"]?["content_encoding"] == .string("gzip"))
        #expect(outcome["download"]?["bytes"] == .number("1000000"))
        guard case .number(let wire)? = outcome["download"]?["wire_bytes"], let wireBytes = Int(wire) else {
            Issue.record("no wire_bytes in \(outcome.text)")
            return
        }
        #expect(wireBytes > 0 && wireBytes < 100_000, "the compressed size: \(wireBytes)")
        guard case .string(let file)? = outcome["attachment"]?["file"] else {
            Issue.record("no attachment file")
            return
        }
        let stored = try #require(FileManager.default.contents(atPath: file))
        let hero = try Fixtures.bytes(ofAsset: "hero.jpg")
        #expect(stored.count == 1_000_000 && Array(stored.prefix(hero.count)) == hero, "the decoded file")
    }

    @Test func aDecodingBombStopsAtApplesCap() async throws {
        defer { cleanUp() }
        let run = try await RichPushBinary.run(
            ["process", "--out", folder + "/out"] + mapping,
            stdin: Self.payload("https://cdn.example.com/hero.jpg?gzip=1&size=200000000"))
        #expect(run.status == 1, "\(run.stderr)")
        let outcome = try #require(try JSONValue.parse(Array(run.stdout.utf8))["richpush"])
        #expect(outcome["reason"] == .string("file-too-large"), "\(run.stderr)")
        #expect(OutputSchemas.violations(of: outcome.text, against: "outcome") == [])
        guard case .number(let bytes)? = outcome["download"]?["bytes"],
            case .number(let wire)? = outcome["download"]?["wire_bytes"]
        else {
            Issue.record("no download in \(outcome.text)")
            return
        }
        #expect((Int(bytes) ?? .max) <= 10_000_000, "decoded bytes stop at the cap")
        #expect((Int(wire) ?? .max) < 1_000_000, "a few kilobytes of the 200 KB gzip body: \(wire)")
        #expect(Fixtures.files(in: folder + "/out").isEmpty, "nothing stored")
    }

    /// Every downloading command refuses a header that would add lines to the request (exit 64).
    @Test(arguments: ["process", "batch", "bench", "fetch", "demo"])
    func refusesAHeaderWithALineBreak(command: String) async throws {
        defer { cleanUp() }
        let extra: [String] =
            switch command {
            case "fetch": ["https://cdn.example.com/hero.png"]
            case "batch": ["--out", folder + "/out", folder]
            case "bench": ["--devices", "1"]
            default: []
            }
        for header in ["X-A: 1\r\nX-Evil: 2", "X-A: 1\nHost: evil.example", "X-A: 1\r", "no colon"] {
            let run = try await RichPushBinary.run([command, "-H", header] + extra + mapping)
            #expect(run.status == 64, "\(command) -H \(header.debugDescription): \(run.stderr)")
            #expect(run.stderr.contains("-H/--header"), "\(run.stderr)")
            #expect(!run.stderr.contains("\r"), "the value is shown escaped")
        }
        let agent = try await RichPushBinary.run([command, "--user-agent", "A/1\r\nX-Evil: 2"] + extra + mapping)
        #expect(agent.status == 64, "\(agent.stderr)")
        #expect(server.requestCount == 0, "nothing was fetched")
    }
}
