import Foundation
import RichPush
import RichPushServices
import TestSupport
import Testing

/// Hostile track endpoints through the binary: rate-limit headers of any value, and an endpoint that
/// echoes the REST API key back in every answer.
extension HostileInputTests {
    /// A fresh App Group container with `events` pending events, and a key file holding a new key.
    static func analyticsRig(events: Int) throws -> (folder: String, key: String, keyFile: String) {
        let folder = try Fixtures.temporaryFolder("richpush-hostile-track")
        try FileManager.default.createDirectory(
            atPath: folder + "/Library/Preferences", withIntermediateDirectories: true)
        let suite = try AppGroupSuite(container: folder, suite: "group.test", creating: true)
        try SuiteRecorder.record(
            (0..<events).map { .event(name: "tap", properties: [.init(key: "seq", value: .integer(Int64($0)))]) },
            in: suite)
        let key = "Echoed-Key-\(UInt64.random(in: 1...UInt64.max))"
        try Data((key + "\n").utf8).write(to: URL(fileURLWithPath: folder + "/key"))
        return (folder, key, folder + "/key")
    }

    static func flushArguments(_ folder: String, endpoint: String) -> [String] {
        [
            "analytics", "flush", "--app-group", folder, "--suite", "group.test", "--endpoint", endpoint,
            "--external-id", "u1", "--api-key-file", folder + "/key", "--backoff", "1", "--attempts", "3",
            "--timeout", "10",
        ]
    }

    /// Each value killed `analytics flush` with SIGILL (exit 132); now it is ignored, the flush backs
    /// off on its own and the retry delivers.
    @Test(
        arguments: ["1e19", "9.3e15", "1e300", "inf", "nan", "-5", "Infinity"], ["Retry-After", "X-RateLimit-Reset"])
    func anyRateLimitHeaderValueNeverKillsTheFlush(value: String, header: String) async throws {
        let rig = try Self.analyticsRig(events: 3)
        defer { try? FileManager.default.removeItem(atPath: rig.folder) }
        let server = try ScriptedHTTPServer(limit: 8) { request in
            request.index == 0
                ? .init(status: 429, headers: [(header, value)], body: #"{"message":"slow down"}"#)
                : .init(status: 201, body: #"{"message":"success"}"#)
        }
        defer { server.close() }
        let run = try await RichPushBinary.run(Self.flushArguments(rig.folder, endpoint: server.baseURL) + ["--json"])
        #expect(run.status == 0, "\(header): \(value): exit \(run.status)\n\(run.stderr)")
        #expect(run.stdout.contains(#""accepted":3"#), "\(run.stdout)")
    }

    /// Every file under `folder` (recursively) that holds `key` in any case.
    static func filesHolding(_ key: String, in folder: String) -> [String] {
        Fixtures.files(in: folder).compactMap { name -> String? in
            let path = folder + "/" + name
            guard let data = FileManager.default.contents(atPath: path), name != "key" else { return nil }
            return String(decoding: data, as: UTF8.self).lowercased().contains(key.lowercased()) ? path : nil
        }
    }

    /// An answer that repeats the request's Authorization header, raw, lower-cased and JSON-escaped,
    /// in its message, its errors, and a header.
    static func echo(_ request: ScriptedHTTPServer.Request, status: Int) -> ScriptedHTTPServer.Response {
        let authorization = request.header("Authorization") ?? ""
        let key = authorization.split(separator: " ").last.map(String.init) ?? ""
        let escaped = key.unicodeScalars.map { String(format: "\\u%04x", $0.value) }.joined()
        let body =
            status < 300
            ? #"{"message":"success","errors":[{"type":"bad token \#(authorization)","input_array":"events","index":0}]}"#
            : #"{"message":"Invalid API key: you sent 'Authorization: \#(authorization)'","errors":["bearer \#(escaped)","\#(key.lowercased())"]}"#
        return .init(status: status, headers: [("Retry-After", "0"), ("X-Echo", authorization)], body: body)
    }

    /// The key was printed on stderr and `--json` stdout when a 401 repeated the Authorization header.
    @Test(arguments: [401, 429, 503, 201])
    func anEndpointThatEchoesTheKeyNeverGetsItPrintedOrStored(status: Int) async throws {
        let rig = try Self.analyticsRig(events: 2)
        defer { try? FileManager.default.removeItem(atPath: rig.folder) }
        let server = try ScriptedHTTPServer(limit: 16) { Self.echo($0, status: status) }
        defer { server.close() }
        var outputs: [String] = []
        for extra in [["--json", "--verbose"], ["--verbose"]] {
            let run = try await RichPushBinary.run(Self.flushArguments(rig.folder, endpoint: server.baseURL) + extra)
            #expect(run.status == 1, "nothing is delivered as it should be: \(run.stderr)")
            outputs += [run.stdout, run.stderr]
            try SuiteRecorder.record(
                [.event(name: "tap", properties: [])], in: try AppGroupSuite(container: rig.folder, suite: "group.test")
            )
        }
        let show = try await RichPushBinary.run(["analytics", "show", "--app-group", rig.folder, "--json"])
        outputs += [show.stdout, show.stderr]
        let joined = outputs.joined(separator: "\n")
        #expect(!joined.lowercased().contains(rig.key.lowercased()), "the key was printed:\n\(joined)")
        if status == 401 {
            #expect(joined.contains("Invalid API key"), "the endpoint's message is still shown: \(joined)")
            #expect(joined.contains("[redacted]"), "\(joined)")
        }
        if status == 201 {
            #expect(joined.contains("bad token [redacted]"), "the rejected reason is shown, redacted: \(joined)")
        }
        #expect(Self.filesHolding(rig.key, in: rig.folder).isEmpty, "the key was stored")
    }

    /// Path A: the tracking line's last error was the endpoint's message, key included.
    @Test func pathAsLastErrorNeverCarriesTheKey() async throws {
        let rig = try Self.analyticsRig(events: 0)
        defer { try? FileManager.default.removeItem(atPath: rig.folder) }
        let server = try ScriptedHTTPServer(limit: 4) { Self.echo($0, status: 401) }
        defer { server.close() }
        let payload = #"{"aps":{"alert":"Hi","mutable-content":1},"braze_id":"u-1"}"#
        let run = try await RichPushBinary.run(
            [
                "process", "--out", rig.folder + "/out", "--report", rig.folder + "/report.json", "--track-endpoint",
                server.baseURL, "--api-key-file", rig.keyFile,
            ], stdin: Data(payload.utf8))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("1 failed") && run.stderr.contains("HTTP 401"), "\(run.stderr)")
        #expect(run.stderr.contains("[redacted]"), "\(run.stderr)")
        let joined = run.stdout + run.stderr
        #expect(!joined.lowercased().contains(rig.key.lowercased()), "the key was printed:\n\(joined)")
        #expect(Self.filesHolding(rig.key, in: rig.folder).isEmpty, "the key was stored")
    }
}
