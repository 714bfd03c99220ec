import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// `richpush process` run as a user would: payload on stdin, mutated payload on stdout.
@Suite struct ProcessCommandTests {
    let server: AssetServer
    let folder: String

    init() throws {
        server = try Fixtures.startServer()
        folder = try Fixtures.temporaryFolder()
    }

    func cleanUp() {
        server.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The options of every run here. The default budget is one a loaded machine cannot exhaust: the
    /// tests whose payload must expire pass their own.
    func options(budget: Int = 60) -> [String] {
        [
            "--out", folder + "/out", "--budget", "\(budget)", "--cacert", Fixtures.caFile, "--connect-to",
            "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)",
        ]
    }

    @Test(arguments: SamplePayloads.expectations.map(\.name))
    func everySamplePayloadEndToEnd(name: String) async throws {
        defer { cleanUp() }
        let expected = try #require(SamplePayloads.expectations.first { $0.name == name })
        let input = try SamplePayloads.bytes(name)
        // A sample expected to expire gets 2 s, against a server that holds its answer 40 s; every other
        // sample's verdict is not about time, and gets a budget a loaded machine cannot exhaust.
        let expiring = expected.verdict == "expired"
        let started = ContinuousClock.now
        // Each sample names its SDK by its keys (Samples/expected.tsv): --sdk auto.
        let run = try await RichPushBinary.run(
            ["process", "--sdk", "auto"] + options(budget: expiring ? 2 : 60), stdin: Data(input), directory: folder)
        let elapsed = ContinuousClock.now - started
        if expiring {
            // The command returned at its budget, whatever the server does: before the server's answer was
            // due (on an idle machine the whole command takes the 2 s and about 20 ms more).
            let delay = try #require(try SamplePayloads.serverDelay(name), "an expiring sample names its delay")
            #expect(elapsed < delay, "returned after \(elapsed), past the server's \(delay) answer")
        }
        let expectedStatus: Int32 = ["attached", "no-attachment"].contains(expected.verdict) ? 0 : 1
        #expect(run.status == expectedStatus, "\(run.stderr)")
        #expect(run.stderr.hasPrefix("richpush: \(expected.verdict)"), "\(run.stderr)")
        let output = try JSONValue.parse(Array(run.stdout.utf8))
        let added = try #require(output["richpush"])
        #expect(OutputSchemas.violations(of: added.text, against: "outcome") == [])
        #expect(output["richpush"]?["verdict"] == .string(expected.verdict))
        #expect(output["richpush"]?["reason"] == .string(expected.reason))
        // Every file the run wrote is inside --out.
        let written = Fixtures.files(in: folder)
        #expect(written.allSatisfy { $0.hasPrefix("out/") && !$0.hasSuffix(".part") }, "\(written)")
        if expected.verdict == "attached" {
            guard case .string(let file) = output["richpush"]?["attachment"]?["file"],
                case .string(let hash) = output["richpush"]?["attachment"]?["sha256"]
            else {
                Issue.record("no attachment in the output")
                return
            }
            #expect(file.hasPrefix(folder + "/out/"))
            #expect(hash.hasPrefix(URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent))
            #expect(FileManager.default.fileExists(atPath: file))
        } else {
            #expect(written.isEmpty)
        }
    }

    @Test func theLargeGIFSampleExpiresOn3GWithTheHintAndAttachesOnLTE() async throws {
        defer { cleanUp() }
        let input = Data(try SamplePayloads.bytes("gif-large.json"))
        func process(_ network: String, budget: Int) async throws -> (BinaryRun, JSONValue?) {
            let run = try await RichPushBinary.run(
                [
                    "process", "--network", network, "--budget", "\(budget)", "--out", folder + "/out", "--cacert",
                    Fixtures.caFile, "--connect-to", "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)",
                ], stdin: input, directory: folder)
            return (run, try JSONValue.parse(Array(run.stdout.utf8))["richpush"])
        }
        // 3.7 MB at 780 kbit/s needs about 38 s: far over 5 s.
        let (slow, expired) = try await process("3g", budget: 5)
        #expect(slow.status == 1, "\(slow.stderr)")
        #expect(expired?["verdict"] == .string("expired"))
        #expect(expired?["reason"] == .string("deadline-exceeded"))
        guard case .string(let hint)? = expired?["hint"] else {
            Issue.record("no hint: \(slow.stdout)")
            return
        }
        #expect(hint.hasPrefix("at 3G this 3.7 MB GIF needs about 38 s; at most "), "\(hint)")
        #expect(hint.hasSuffix(" fits in 5.0 s"), "\(hint)")
        #expect(slow.stderr.contains(hint), "\(slow.stderr)")
        // At 50 Mbit/s the same file takes well under a second: a budget a loaded machine cannot exhaust.
        let (fast, attached) = try await process("lte", budget: 60)
        #expect(fast.status == 0, "\(fast.stderr)")
        #expect(attached?["verdict"] == .string("attached"), "\(fast.stderr)")
        #expect(attached?["hint"] == nil)
    }

    @Test func readsAPayloadFileAndWritesAReport() async throws {
        defer { cleanUp() }
        let report = folder + "/report.json"
        let run = try await RichPushBinary.run(
            ["process", SamplePayloads.folder + "/audio-mp3.json", "--report", report, "--quiet"] + options())
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty, "--quiet")
        let json =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
        #expect(json?["verdict"] as? String == "attached")
        #expect((json?["download"] as? [String: Any])?["status"] as? Int == 200)
        #expect((json?["sniff"] as? [String: Any])?["mime"] as? String == "audio/mpeg")
        let text = try String(contentsOfFile: report, encoding: .utf8)
        #expect(OutputSchemas.violations(of: text, against: "outcome") == [])
        // The same outcome as the payload's `richpush` object.
        let payload = try JSONValue.parse(Array(run.stdout.utf8))
        let fromReport = try JSONValue.parse(Array(text.utf8))
        func number(_ value: JSONValue?) -> Double? {
            if case .number(let text) = value { return Double(text) }
            return nil
        }
        for milestone in ["queue", "dns", "connect", "tls", "first_byte", "total"] {
            let fromPayload = number(payload["richpush"]?["download"]?["timings_ms"]?[milestone])
            #expect(fromPayload != nil && fromPayload == number(fromReport["download"]?["timings_ms"]?[milestone]))
        }
        #expect(payload["richpush"]?["attachment"]?["sha256"] == fromReport["attachment"]?["sha256"])
    }

    @Test(arguments: ["not json at all", "[1]", "", "{\"aps\": 1}"])
    func rejectsUnusableInputWithExitCode65(input: String) async throws {
        defer { cleanUp() }
        let run = try await RichPushBinary.run(["process"] + options(), stdin: Data(input.utf8))
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr.contains("rejected"))
    }

    @Test func rejectsAnUnreadableFile() async throws {
        defer { cleanUp() }
        let run = try await RichPushBinary.run(["process", folder + "/missing.json"] + options())
        #expect(run.status == 65)
        #expect(run.stderr.contains("unreadable-input"))
        #expect(run.stdout.isEmpty)
    }

    @Test(arguments: [["--budget", "never"], ["--push-type", "carrier-pigeon"], ["a.json", "b.json"], ["--unknown"]])
    func rejectsBadUsageWithExitCode64(extra: [String]) async throws {
        defer { cleanUp() }
        let run = try await RichPushBinary.run(["process"] + extra)
        #expect(run.status == 64, "\(run.stderr)")
    }

    /// Starts `process` on a 9 MB asset trickled at 90 kB/s and returns once the asset is arriving
    /// into its unnamed temporary file in --out (O_TMPFILE: named only when whole). 100 s: a test
    /// process that the suite's load starves for seconds still signals it mid-way; the wait for the
    /// start (over 12 s on a loaded machine) stretches with its load, and stays under that.
    func startSlowDownload(ignoring ignored: [Int32] = []) async throws -> RunningBinary {
        let payload =
            #"{"aps":{"alert":"a","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg?size=9000000&rate=90000","type":"jpg"}}}"#
        let running = try RichPushBinary.start(
            ["process"] + options(budget: 300), stdin: Data(payload.utf8), directory: folder,
            ignoring: ignored)
        let partial = await Fixtures.waitUntil(seconds: min(TimeScale.scaled(40), 80)) {
            running.openFiles.contains { $0.hasPrefix(folder + "/out/") }
        }
        #expect(partial, "the download never started: \(running.openFiles)")
        return running
    }

    @Test func leavesNoFileWhenInterrupted() async throws {
        defer { cleanUp() }
        let running = try await startSlowDownload()
        running.signal(SIGINT)
        let run = await running.wait()
        #expect(run.status == 130, "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        #expect(Fixtures.files(in: folder + "/out").isEmpty, "no partial download left in --out")
    }

    @Test func keepsAnIgnoredSIGINTIgnoredAndStopsOnSIGTERM() async throws {
        defer { cleanUp() }
        // As a background job of a non-interactive shell (or under nohup): SIGINT starts ignored.
        let running = try await startSlowDownload(ignoring: [SIGINT])
        // richpush left SIGINT ignored (its bit in SigIgn), and a SIGINT does not stop it.
        #expect(running.signal(SIGINT, isIn: "SigIgn") == true)
        running.signal(SIGINT)
        try await Task.sleep(for: .seconds(1))
        #expect(running.isRunning, "an inherited SIG_IGN for SIGINT is kept")
        running.signal(SIGTERM)
        let run = await running.wait()
        #expect(run.status == 130, "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        #expect(Fixtures.files(in: folder + "/out").isEmpty, "no partial download left in --out")
    }

    @Test func exitsWith74WhenStdoutCannotBeWritten() async throws {
        defer { cleanUp() }
        let run = try await RichPushBinary.run(
            ["process"] + options(), stdin: Data(try SamplePayloads.bytes("no-attachment.json")),
            stdoutPath: "/dev/full")
        #expect(run.status == 74, "\(run.stderr)")
    }

    @Test func exitsWith74WhenTheOutputFolderIsUnusable() async throws {
        defer { cleanUp() }
        _ = FileManager.default.createFile(atPath: folder + "/file", contents: Data())
        let run = try await RichPushBinary.run(
            ["process", "--out", folder + "/file"], stdin: Data(try SamplePayloads.bytes("image-jpg.json")))
        #expect(run.status == 74, "\(run.stderr)")
    }
}

/// `richpush demo`: the README's main job.
@Suite struct DemoCommandTests {
    @Test func showsEverySampleWithItsExpectedVerdict() async throws {
        // A budget with room for the samples that attach, under the slow samples' 40 s (they still expire).
        let run = try await RichPushBinary.run(
            ["demo", "--budget", "\(SamplePayloads.budgetSeconds)"], directory: Fixtures.root)
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        let rows = run.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(rows.first?.prefix(2) == ["PAYLOAD", "SDK"])
        for expected in SamplePayloads.expectations {
            let row = rows.first { $0.first == expected.name }
            #expect(row != nil, "\(expected.name) missing from the table")
            // The SDK column: the dialect its keys name, which each SDK's sample has as its prefix.
            let sdk = Dialect.all.map(\.name).first { expected.name.hasPrefix($0 + "-") } ?? "braze"
            #expect(row?.dropFirst().first == sdk, "\(expected.name): \(row ?? [])")
        }
        #expect(run.stdout.contains("Every payload got the verdict Samples/expected.tsv expects."))
    }
}
