import Foundation
import RichPush
import RichPushRuns
import TestSupport
import Testing

/// `richpush bench` and `richpush report merge` as a user runs them, one bench at a time: each starts a
/// server and a burst, and the other suites share the two cores.
@Suite(.serialized) struct BenchCommandTests {
    @Test func benchmarksTheEmbeddedServerAndMergesShards() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var reports: [String] = []
        for shard in 1...2 {
            let path = folder + "/shard-\(shard).json"
            let run = try await RichPushBinary.run(
                [
                    "bench", "--serve", Fixtures.assets, "--devices", "60", "--ramp", "0.5", "--shard", "\(shard)/2",
                    "--json", path, "--no-progress",
                ], directory: Fixtures.root)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.contains("Display rate: 100.0% of 30 devices"))
            reports.append(path)
        }
        let merged = try await RichPushBinary.run(["report", "merge"] + reports + ["--html", folder + "/merged.html"])
        #expect(merged.status == 0, "\(merged.stderr)")
        let report = try BenchReport.read(Data(merged.stdout.utf8))
        #expect(report.devices == 60 && report.attached == 60 && report.shards == [1, 2])
        for json in [merged.stdout] + (try reports.map { try String(contentsOfFile: $0, encoding: .utf8) }) {
            let problems = JSONSchemaCheck.violations(
                of: try JSONSerialization.jsonObject(with: Data(json.utf8)), against: try Self.schema())
            #expect(problems.isEmpty, "\(problems.prefix(5))")
        }
        #expect(report.histograms["end_to_end"]?.count == 60)
        let html = try String(contentsOfFile: folder + "/merged.html", encoding: .utf8)
        #expect(html.contains("<svg") && html.contains("100%"))
        // Thresholds on the merged whole.
        let strict = try await RichPushBinary.run(["report", "merge"] + reports + ["--max-p99", "0.001"])
        #expect(strict.status == 1, "\(strict.stderr)")
        #expect(strict.stderr.contains("threshold failed: p99 end-to-end"), "\(strict.stderr)")
        // --json: the same JSON in a file, written when the gate fails too, never when nothing merges
        // (an old file stays as it was), and stdout stays empty.
        let file = folder + "/merged.json"
        let toFile = try await RichPushBinary.run(
            ["report", "merge"] + reports + ["--max-p99", "0.001", "--json", file])
        #expect(toFile.status == 1 && toFile.stdout.isEmpty, "\(toFile.stderr)")
        #expect(try BenchReport.read(try Data(contentsOf: URL(fileURLWithPath: file))).passed == false)
        let refused = try await RichPushBinary.run(["report", "merge", reports[0], reports[0], "--json", file])
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(try BenchReport.read(try Data(contentsOf: URL(fileURLWithPath: file))).passed == false)
        #expect(Fixtures.files(in: folder).allSatisfy { !$0.hasSuffix(".part") })
        // A shard given twice is refused, not double-counted; a missing shard warns, or refuses when required.
        let twice = try await RichPushBinary.run(["report", "merge", reports[0], reports[0]])
        #expect(twice.status == 65 && twice.stderr.contains("repeats shard 1"), "\(twice.stderr)")
        let partial = try await RichPushBinary.run(["report", "merge", reports[0]])
        #expect(partial.stderr.contains("warning: shard 2 of 2 is missing"), "\(partial.stderr)")
        let required = try await RichPushBinary.run(["report", "merge", reports[0], "--require-all-shards"])
        #expect(required.status == 65 && required.stdout.isEmpty, "\(required.stderr)")
    }

    @Test func aBenchWhereNothingDisplaysFailsAndThresholdsReadAsK6Writes() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let broken = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "--url", "hero.jpg?status=503", "--devices", "6", "--no-progress",
                "--no-preflight", "--json", folder + "/broken.json",
            ], directory: Fixtures.root)
        #expect(broken.status == 1, "no threshold given, and nothing displays: \(broken.stderr)")
        #expect(broken.stdout.contains("FAIL display 0.0% fails the threshold display>0%"), "\(broken.stdout)")
        let report = try BenchReport.read(try Data(contentsOf: URL(fileURLWithPath: folder + "/broken.json")))
        #expect(report.passed == false && report.thresholds.first?.expression == "display>0%")
        #expect(report.identity?.runs.count == 1 && report.identity?.shardCount == 1)
        let checked = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "--url", "hero.jpg", "--devices", "6", "--no-progress",
                "--threshold", "display>=99%", "--threshold", "p95<60s", "--threshold", "http_5xx<1%",
                "--threshold", "would_crash==0",
            ], directory: Fixtures.root)
        #expect(checked.status == 0, "\(checked.stderr)")
        for expression in ["display>=99%", "p95<60000ms", "http_5xx<1%", "would_crash==0", "configuration_error==0"] {
            #expect(checked.stdout.contains("PASS ") && checked.stdout.contains(expression), "\(expression)")
        }
        let malformed = try await RichPushBinary.run(
            ["bench", "--serve", Fixtures.assets, "--devices", "1", "--threshold", "display>=99"],
            directory: Fixtures.root)
        #expect(malformed.status == 64 && malformed.stderr.contains("give it in percent"), "\(malformed.stderr)")
    }

    @Test func devicesCutByTheTimeLimitCountAsNotShown() async throws {
        let run = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "--url", "hero.jpg", "--devices", "40", "--rate", "10",
                "--time-limit", "1", "--no-progress", "--fail-under", "99",
            ], directory: Fixtures.root)
        #expect(run.status == 1, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("Not run: "), "\(run.stdout)")
        #expect(run.stderr.contains("fails the threshold display>=99%"), "\(run.stderr)")
    }

    @Test func exitsWith130WhenInterrupted() async throws {
        let running = try RichPushBinary.start(
            ["bench", "--serve", Fixtures.assets, "--url", "hero.jpg?delay=20000", "--devices", "20", "--no-progress"],
            directory: Fixtures.root)
        // From richpush's C constructor on (past exec, SIGINT caught) a Ctrl-C interrupts the command;
        // before it, the signal's default action would end the process. A loaded machine has taken over
        // 12 s to get there, longer than any fixed sleep.
        let started = await Fixtures.waitUntil(seconds: 60) {
            let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(running.pid)/exe")) ?? ""
            return exe.hasSuffix("/richpush") && running.signal(SIGINT, isIn: "SigCgt") == true
        }
        #expect(started, "richpush never started")
        try await Task.sleep(for: .milliseconds(1500))
        running.signal(SIGINT)
        let run = await running.wait()
        #expect(run.status == 130, "\(run.stderr)")
        #expect(run.stderr.contains("interrupted"))
        #expect(run.stdout.contains("Not run: 20 devices of 20"), "\(run.stdout)")
    }

    @Test func refusesAHostThatIsNotThisMachine() async throws {
        let run = try await RichPushBinary.run(["bench", "--url", "https://cdn.example.com/hero.jpg", "--devices", "5"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("--i-own-this-host"))
    }

    @Test(arguments: [
        ["bench", "--serve", "Samples/assets"], ["bench", "--devices", "0", "--url", "https://127.0.0.1/a.jpg"],
        ["bench", "--devices", "5", "--ramp", "1", "--rate", "5", "--url", "https://127.0.0.1/a.jpg"],
        ["bench", "--devices", "5", "--shard", "3/2", "--url", "https://127.0.0.1/a.jpg"],
        ["report", "merge"], ["report", "fold", "a.json"],
    ])
    func rejectsBadUsage(arguments: [String]) async throws {
        let run = try await RichPushBinary.run(arguments, directory: Fixtures.root)
        #expect(run.status == 64, "\(run.stderr)")
    }

    static func schema() throws -> [String: Any] {
        let schema = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: Fixtures.root + "/bench/report.schema.json")))
        return try #require(schema as? [String: Any])
    }

    @Test func storesNothingWithoutOut() async throws {
        let temporary = try Fixtures.temporaryFolder()
        let out = try Fixtures.temporaryFolder()
        defer {
            try? FileManager.default.removeItem(atPath: temporary)
            try? FileManager.default.removeItem(atPath: out)
        }
        let environment = ["TMPDIR": temporary, "TMP": temporary, "TEMP": temporary]
        // Slow responses keep the devices in flight while the temporary folder is looked at.
        let running = try RichPushBinary.start(
            ["bench", "--serve", Fixtures.assets, "--url", "hero.jpg?delay=1500", "--devices", "6", "--no-progress"],
            directory: Fixtures.root, environment: environment)
        try await Task.sleep(for: .milliseconds(900))
        let during = FolderSnapshot.take(temporary)
        let run = await running.wait()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Display rate: 100.0% of 6 devices"), "\(run.stdout)")
        #expect(during.isEmpty, "nothing written while the devices run: \(during.keys.sorted())")
        #expect(FolderSnapshot.take(temporary).isEmpty)
        // With --out the attachment is kept.
        let kept = try await RichPushBinary.run(
            ["bench", "--serve", Fixtures.assets, "--devices", "4", "--no-progress", "--out", out],
            directory: Fixtures.root, environment: environment)
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(Fixtures.files(in: out).contains { $0.hasSuffix(".jpg") }, "\(Fixtures.files(in: out))")
    }

    @Test func correctsAURLWithoutAScheme() async throws {
        let run = try await RichPushBinary.run(["bench", "--url", "cdn.example.com/hero.jpg", "--devices", "5"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("https://cdn.example.com/hero.jpg"), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test func stopsBeforeTheBurstWhenTheServerIsNotTrusted() async throws {
        // The embedded server's certificate comes from the test CA, which the system store does not hold.
        let run = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "--devices", "200", "--no-progress", "--cacert",
                "/etc/ssl/certs/ca-certificates.crt",
            ], directory: Fixtures.root)
        #expect(run.status == 69, "\(run.stderr)")
        #expect(run.stderr.contains("pass --cacert FILE (the server's CA)"), "\(run.stderr)")
        #expect(!run.stdout.contains("Display rate"), "no device ran")
    }

    @Test func stopsBeforeTheBurstWhenTheHostIsUnreachable() async throws {
        let closed = try ClosedPort()
        let run = try await RichPushBinary.run(
            [
                "bench", "--url", "http://127.0.0.1:\(closed.number)/hero.jpg", "--allow-http", "--devices", "200",
                "--no-progress",
            ])
        #expect(run.status == 69, "\(run.stderr)")
        #expect(run.stderr.contains("connect-failed") && run.stderr.contains("No device was started"), "\(run.stderr)")
    }

    @Test func saysWhichThresholdFailed() async throws {
        let run = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "--url", "hero.jpg?every=2&status=503", "--devices", "20",
                "--no-progress", "--fail-under", "95", "--max-p99", "60000",
            ], directory: Fixtures.root)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("threshold failed: display "), "\(run.stderr)")
        #expect(run.stderr.contains("fails the threshold display>=95% by"))
        #expect(!run.stderr.contains("fails the threshold p99<=60000ms"), "the latency threshold passed")
        #expect(run.stdout.contains("PASS p99 end-to-end"))
        #expect(run.stdout.contains("Gate: FAIL (1 of 4 thresholds failed)."), "\(run.stdout)")
        #expect(run.stdout.contains("5xx") && run.stdout.contains("503"))
        let slow = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "--url", "hero.jpg?delay=300", "--devices", "4", "--no-progress",
                "--max-p99", "100",
            ], directory: Fixtures.root)
        #expect(slow.status == 1, "\(slow.stderr)")
        #expect(slow.stderr.contains("fails the threshold p99<=100ms by"), "\(slow.stderr)")
    }

    @Test func printsOneProgressLinePerSecondForCILogs() async throws {
        let run = try await RichPushBinary.run(
            ["bench", "--serve", Fixtures.assets, "--devices", "30", "--ramp", "2.5", "--progress"],
            directory: Fixtures.root)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n").filter { $0.hasPrefix("elapsed ") }
        #expect(lines.count >= 2, "\(run.stderr)")
        #expect(lines.allSatisfy { $0.contains("in flight") && $0.contains("ETA") && $0.contains("failed") })
        #expect(!run.stderr.contains("\r"), "no terminal redraws in a log")
        #expect(lines.last?.contains("done 30/30") == true)
    }

    @Test func redrawsOnATerminalAtLeastTwiceASecond() async throws {
        // `script` gives the bench a terminal on stderr; the redraws are counted from what it saw.
        let run = try await Shell.run(
            """
            script -qec '"$RP" bench --serve Samples/assets --devices 30 --ramp 2.5 >/dev/null' /dev/null
            """, in: Fixtures.root)
        #expect(run.status == 0, "\(run.stderr)")
        let draws = run.stdout.split(separator: "\r").filter { $0.contains("elapsed ") }
        #expect(draws.count >= 5, "a 2.5 s ramp redraws at least twice a second: \(draws.count) draws")
        #expect(draws.contains { $0.contains("done") && !$0.contains("done 30/30") }, "progress before the end")
        #expect(draws.allSatisfy { $0.contains("in flight") && $0.contains("ETA") && $0.contains("failed") })
    }

    @Test func countsOneDescriptorPerDeviceWhenNothingIsStored() async throws {
        let out = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        // What is open at start, 64 kept and 80 sockets fit in 200 open files; with --out each device
        // also holds a file: 160 more do not.
        let run = try await Shell.run(
            """
            ulimit -n 200
            "$RP" bench --serve Samples/assets --devices 80 --concurrency 80 --ramp 1 --no-progress
            echo "status $?"
            "$RP" bench --serve Samples/assets --devices 80 --concurrency 80 --ramp 1 --no-progress --out "\(out)"
            echo "status $?"
            """, in: Fixtures.root)
        let statuses = run.stdout.split(separator: "\n").filter { $0.hasPrefix("status ") }
        #expect(statuses == ["status 0", "status 69"], "\(run.stdout) \(run.stderr)")
        #expect(run.stderr.contains("(2 per download: a socket, a temporary file;"), "\(run.stderr)")
    }
}
