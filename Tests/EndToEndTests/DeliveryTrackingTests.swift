import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// Path A: `--track-endpoint` makes process and batch log one delivery event per payload for its
/// `braze_id`, after the verdicts, 75 to a request, against the embedded `/users/track`.
@Suite(.serialized) struct DeliveryTrackingTests {
    struct Rig {
        let folder: String
        let key: String
        let log: String
        let server: AssetServer

        init() throws {
            folder = try Fixtures.temporaryFolder()
            key = "path-a-key-\(UInt64.random(in: 1...UInt64.max))"
            try Data((key + "\n").utf8).write(to: URL(fileURLWithPath: folder + "/key"))
            log = folder + "/track.ndjson"
            server = try AssetServer(
                root: Fixtures.assets, tls: try Fixtures.tlsIdentity(),
                usersTrack: UsersTrackOptions(apiKey: key, logPath: log, limit: 100_000))
        }

        var options: [String] {
            [
                "--cacert", Fixtures.caFile, "--connect-to", "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)",
                "--track-endpoint", server.httpBaseURL, "--api-key-file", folder + "/key",
            ]
        }

        /// The objects the endpoint accepted (its log wraps each with the array and request it came in).
        func logged() -> [JSONValue] { loggedLines().compactMap { $0["object"] } }

        func loggedLines() -> [JSONValue] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
                try? JSONValue.parse(Array($0.utf8))
            }
        }

        func stop() {
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    static func payload(_ index: Int, brazeID: Bool = true) -> String {
        let id = brazeID ? #","braze_id":"user-\#(index)""# : ""
        return
            #"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg","type":"jpg"}}\#(id)}"#
    }

    @Test func processLogsOneDeliveryEventForTheBrazeIDAfterTheVerdict() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        let run = try await RichPushBinary.run(
            ["process", "--out", rig.folder + "/out"] + rig.options, stdin: Data(Self.payload(7).utf8))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("1 accepted"), "\(run.stderr)")
        let events = rig.logged()
        #expect(events.count == 1)
        #expect(events.first?["braze_id"] == .string("user-7"), "\(events)")
        #expect(events.first?["name"] == .string("rich_push_delivered"))
        #expect(events.first?["properties"]?["verdict"] == .string("attached"))
        #expect(!run.stderr.contains(rig.key) && !run.stdout.contains(rig.key), "the key is never printed")
    }

    @Test func aPayloadWithoutBrazeIDGetsAWarningNotARequest() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        let run = try await RichPushBinary.run(
            ["process", "--out", rig.folder + "/out"] + rig.options, stdin: Data(Self.payload(1, brazeID: false).utf8))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("tracking-no-braze-id"))
        #expect(run.stderr.contains("0 request(s)"), "\(run.stderr)")
        #expect(rig.logged().isEmpty)
    }

    @Test func batchGroupsItsEventsIntoRequestsOf75() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        let input = rig.folder + "/payloads.ndjson"
        let lines = (0..<160).map { Self.payload($0) }.joined(separator: "\n") + "\n"
        try Data(lines.utf8).write(to: URL(fileURLWithPath: input))
        let run = try await RichPushBinary.run(
            ["batch", input, "--out", rig.folder + "/out", "--no-progress"] + rig.options)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("160 delivery event(s) in 3 request(s), 160 accepted"), "\(run.stderr)")
        let ids = Set(
            rig.logged().compactMap { event -> String? in
                if case .string(let id)? = event["braze_id"] { return id }
                return nil
            })
        #expect(ids.count == 160)
        let requests = Set(
            rig.loggedLines().compactMap { line -> String? in
                if case .number(let number)? = line["request"] { return number }
                return nil
            })
        #expect(requests.count == 3, "160 events in requests of at most 75")
    }
}

extension DeliveryTrackingTests {
    /// A slow endpoint held process's exit for a fixed 30 s; the events now get the run's budget.
    @Test func aSlowEndpointHoldsTheExitForTheBudgetAtMost() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        let payload = #"{"aps":{"alert":"Hi","mutable-content":1},"braze_id":"u-1"}"#
        let process = ["process", "--out", rig.folder + "/out", "--budget", "2"]
        // The same run without the endpoint first: what starting and running the binary take under this
        // test's own load.
        let aloneStarted = ContinuousClock.now
        let aloneRun = try await RichPushBinary.run(process, stdin: Data(payload.utf8))
        let alone = ContinuousClock.now - aloneStarted
        #expect(aloneRun.status == 0, "\(aloneRun.stderr)")
        let started = ContinuousClock.now
        let run = try await RichPushBinary.run(
            process + [
                "--track-endpoint", rig.server.httpBaseURL + "/?delay=40000", "--api-key-file", rig.folder + "/key",
            ], stdin: Data(payload.utf8))
        let elapsed = ContinuousClock.now - started
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("1 failed"), "\(run.stderr)")
        // The 2 s budget on top of the run alone, not the old 30 s: the line is halfway between.
        #expect(elapsed < alone + .seconds(16), "held for \(elapsed) with --budget 2 (\(alone) without the endpoint)")
    }
}
