import AssetServer
import Foundation
import RichPush
import RichPushServices
import TestSupport
import Testing

/// `richpush analytics` run as separate processes: record, show, flush against the embedded endpoint.
@Suite struct AnalyticsCommandTests {
    /// An empty App Group container with `Library/Preferences`.
    static func container() throws -> String {
        let folder = try Fixtures.temporaryFolder("richpush-analytics")
        try FileManager.default.createDirectory(
            atPath: folder + "/Library/Preferences", withIntermediateDirectories: true)
        return folder
    }

    static func suiteRoot(_ container: String, suite: String = "group.test") throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: container + "/Library/Preferences/\(suite).plist"))
        return try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
    }

    @Test func concurrentRecordsFromSeveralProcessesLoseNothing() async throws {
        let folder = try Self.container()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let processes = 4
        let records = 25
        try await withThrowingTaskGroup(of: Int32.self) { group in
            for process in 0..<processes {
                group.addTask {
                    for record in 0..<records {
                        let run = try await RichPushBinary.run([
                            "analytics", "record", "--app-group", folder, "--suite", "group.test", "--event", "tap",
                            "--property", "process=\(process)", "--property", "record=\(record)",
                            "--attribute", "last_\(process)=\(record)",
                        ])
                        if run.status != 0 { return run.status }
                    }
                    return 0
                }
            }
            for try await status in group { #expect(status == 0) }
        }
        let root = try Self.suiteRoot(folder)
        let events = try #require(root["pending_custom_events"] as? [[String: Any]])
        #expect(events.count == processes * records)
        let pairs = Set(
            events.compactMap { event -> String? in
                guard let process = event["process"] as? Int, let record = event["record"] as? Int else { return nil }
                return "\(process)-\(record)"
            })
        #expect(pairs.count == processes * records, "every record once")
        #expect((root["pending_custom_attributes"] as? [Any])?.count == processes * records)
        #expect(
            Fixtures.files(in: folder + "/Library/Preferences").allSatisfy { !$0.hasSuffix(".part") },
            "no temporary left behind")
    }

    @Test func showPointsOutTheSampleSuiteDefects() async throws {
        let run = try await RichPushBinary.run([
            "analytics", "show", "--app-group", Fixtures.root + "/Samples/app-group", "--json",
        ])
        #expect(run.status == 1, "defects make show exit 1: \(run.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let entries = try #require(report["entries"] as? [[String: Any]])
        let codes = Set(
            entries.flatMap { ($0["defects"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String } }
                + (report["suite_defects"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String })
        #expect(
            codes == ["event-name-not-string", "event-under-attributes", "undecodable-user-attribute", "unknown-key"])
        let table = try await RichPushBinary.run([
            "analytics", "show", "--app-group", Fixtures.root + "/Samples/app-group",
        ])
        #expect(table.stdout.contains("defect: unknown-key"))
    }

    @Test func recordRefusesAPropertyWithoutAnEvent() async throws {
        let folder = try Self.container()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try await RichPushBinary.run([
            "analytics", "record", "--app-group", folder, "--suite", "group.test", "--property", "a=1",
        ])
        #expect(run.status == 64)
        #expect(!FileManager.default.fileExists(atPath: folder + "/Library/Preferences/group.test.plist"))
    }

    /// A missing App Group is unusable input (65) with a message naming it, for every subcommand,
    /// never an internal error.
    @Test(arguments: [
        ["show"], ["record", "--event", "opened"],
        // Port 9 is never contacted: the App Group is checked first.
        ["flush", "--endpoint", "http://127.0.0.1:9/", "--external-id", "u1", "--api-key-file", "KEY"],
    ])
    func aMissingAppGroupIsUnusableInput(arguments: [String]) async throws {
        let folder = try Self.container()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let key = folder + "/key.txt"
        try "k-123\n".write(toFile: key, atomically: true, encoding: .utf8)
        let run = try await RichPushBinary.run(
            ["analytics", arguments[0], "--app-group", "/nonexistent/group"]
                + arguments.dropFirst().map { $0 == "KEY" ? key : $0 })
        #expect(run.status == 65, "\(run.stderr)")
        #expect(!run.stderr.contains("internal error"), "\(run.stderr)")
        #expect(run.stderr.contains("'/nonexistent/group' is not a folder"), "\(run.stderr)")
    }

    /// The seq property of every logged event.
    static func loggedSeqs(_ path: String) throws -> [Int] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").compactMap { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return ((object["object"] as? [String: Any])?["properties"] as? [String: Any])?["seq"] as? Int
        }
    }

    /// The seqs of the items a flush summary lists as unacknowledged.
    static func unacknowledgedSeqs(_ stdout: String) -> Set<Int> {
        guard let summary = try? JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any],
            let items = summary["unacknowledged"] as? [[String: Any]]
        else { return [] }
        return Set(
            items.compactMap { item in
                (item["fields"] as? [[String: Any]])?.first { $0["key"] as? String == "seq" }?["value"] as? Int
            })
    }

    // 24 runs of the binary, which a loaded machine takes over 12 s to start: the limit stretches with it.
    @Test(.timeLimit(.minutes(TimeScale.scaled(5))))
    func aFlushKilledAtRandomMomentsThenResumedDeliversEveryItemAndReportsItsDuplicates() async throws {
        let folder = try Self.container()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let key = "crash-test-key-\(UInt64.random(in: 1...UInt64.max))"
        try Data((key + "\n").utf8).write(to: URL(fileURLWithPath: folder + "/key"))
        let log = folder + "/track.ndjson"
        let server = try AssetServer(
            root: Fixtures.assets, usersTrack: UsersTrackOptions(apiKey: key, logPath: log, limit: 100_000))
        defer { server.stop() }
        let suite = try AppGroupSuite(container: folder, suite: "group.test", creating: true)
        var next = 0
        func recordMore(_ count: Int) throws {
            try SuiteRecorder.record(
                (next..<next + count).map {
                    .event(name: "tap", properties: [.init(key: "seq", value: .integer(Int64($0)))])
                },
                in: suite)
            next += count
        }
        try recordMore(300)
        let flush = [
            "analytics", "flush", "--app-group", folder, "--suite", "group.test", "--external-id", "user-1",
            "--api-key-file", folder + "/key", "--json", "--verbose", "--backoff", "20", "--timeout", "10",
        ]
        var reported = Set<Int>()
        var outputs: [String] = []
        let runs = 24
        for run in 0..<runs {
            // Every other run finds new items too (recorded between flushes), so it always has a request to make.
            if run % 2 == 1 { try recordMore(20) }
            // A slow endpoint (every request answered after 120 ms) widens the window a kill can land in.
            let running = try RichPushBinary.start(flush + ["--endpoint", server.httpBaseURL + "/?delay=120"])
            if run % 2 == 0 {
                // Any moment: starting, claiming, between requests, waiting for an answer.
                try await Task.sleep(for: TimeScale.scaled(.milliseconds(Int.random(in: 0...500))))
            } else {
                // Soon after a request reached the endpoint, however slowly the process started (a loaded
                // machine has taken over 12 s).
                let before = server.requestCount
                let deadline = ContinuousClock.now + .seconds(60)
                while server.requestCount == before && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...200)))
            }
            running.signal(SIGKILL)
            let result = await running.wait()
            outputs += [result.stdout, result.stderr]
            reported.formUnion(Self.unacknowledgedSeqs(result.stdout))
        }
        let final = try await RichPushBinary.run(flush + ["--endpoint", server.httpBaseURL])
        outputs += [final.stdout, final.stderr]
        #expect(final.status == 0, "the resumed flush completes: \(final.stderr)")
        reported.formUnion(Self.unacknowledgedSeqs(final.stdout))

        let seqs = try Self.loggedSeqs(log)
        #expect(Set(seqs) == Set(0..<next), "every item delivered: \(Set(0..<next).subtracting(seqs).sorted())")
        let twice = Set(Dictionary(grouping: seqs, by: { $0 }).filter { $0.value.count > 1 }.keys)
        #expect(twice.isSubset(of: reported), "unreported duplicates: \(twice.subtracting(reported).sorted())")
        #expect(!reported.isEmpty, "some kill landed while a request waited for its answer")
        #expect(try suite.read().entries.isEmpty)

        // The key never leaves the key file: not in any output, the endpoint's log, the suite or the outbox.
        var files = [log]
        files += Fixtures.files(in: folder + "/Library/Preferences").map { folder + "/Library/Preferences/" + $0 }
        for path in files {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
            #expect(bytes.range(of: Data(key.utf8)) == nil, "the key is in \(path)")
        }
        #expect(!outputs.contains { $0.contains(key) })
    }

    @Test func flushAgainstServeDeliversTheSampleSuiteAndNeverPrintsTheKey() async throws {
        let folder = try Fixtures.temporaryFolder("richpush-analytics-sample")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.copyItem(atPath: Fixtures.root + "/Samples/app-group", toPath: folder + "/app-group")
        let key = "sample-key-\(UInt64.random(in: 1...UInt64.max))"
        try Data(key.utf8).write(to: URL(fileURLWithPath: folder + "/key"))
        let log = folder + "/track.ndjson"
        let serve = try RichPushBinary.start(
            [
                "serve", Fixtures.assets, "--no-tls", "--api-key-file", folder + "/key", "--track-log", log,
                "--access-log",
            ], stdoutPath: folder + "/serve.out")
        var base = ""
        // Up to 60 s: a loaded machine has taken over 12 s to start the binary.
        for _ in 0..<1200 where base.isEmpty {
            try await Task.sleep(for: .milliseconds(50))
            base =
                ((try? String(contentsOfFile: folder + "/serve.out", encoding: .utf8)) ?? "")
                .split(separator: "\n").first.map(String.init) ?? ""
        }
        let flush = try await RichPushBinary.run(
            [
                "analytics", "flush", "--app-group", folder + "/app-group", "--endpoint", base, "--braze-id", "b-1",
                "--verbose",
            ], environment: ["BRAZE_REST_API_KEY": key])
        let refused = try await RichPushBinary.run([
            "analytics", "flush", "--app-group", folder + "/app-group", "--endpoint", base, "--braze-id", "b-1",
            "--api-key", key,
        ])
        let wrong = try await RichPushBinary.run(
            ["analytics", "flush", "--app-group", folder + "/app-group", "--endpoint", base, "--braze-id", "b-1"],
            environment: ["BRAZE_REST_API_KEY": "not-the-key"])
        serve.signal(SIGINT)
        let served = await serve.wait()
        #expect(!base.isEmpty, "serve printed its URL: \(served.stderr)")
        #expect(flush.status == 1, "the sample's defective entries are rejected and left in the suite")
        #expect(flush.stdout.contains("accepted 5"), "\(flush.stdout)\n\(flush.stderr)")
        #expect(flush.stdout.contains("rejected 3"))
        let logged = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(logged.split(separator: "\n").count == 5)
        #expect(logged.contains("\"braze_id\":\"b-1\""))
        #expect(refused.status == 64)
        #expect(wrong.status == 1)
        for run in [flush, refused, wrong, served] {
            #expect(!run.stdout.contains(key) && !run.stderr.contains(key))
        }
        #expect(!logged.contains(key))
    }
}
