import Foundation
import RichPush
import RichPushRuns
import TestSupport
import Testing

/// `bench --start-at` through the binary: shards started at different moments wait for one shared
/// start, record their lateness and clock, and merge into a timeline that shows one burst; a start
/// outside its window is a usage error before anything starts.
@Suite(.serialized) struct BenchStartAtTests {
    @Test func threeShardsStartedApartSendOneBurst() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Seconds ahead: room for three processes to start, each with its server and trial download,
        // on a machine the other suites keep busy (at the suite's start, 8 s was once not enough for
        // one shard, and 25 s once not enough for the third in a run of every suite at once). So the
        // room is measured: one whole bench of the same shape, timed now, four times over (the three
        // launches overlap), beside 25 s stretched with the load. The processes are started 2 s apart:
        // what the test asserts is that they began closer together than that (the wait, not the
        // launch, set the start), a bound measured in the run, not a wall-clock one.
        let calibration = ContinuousClock.now
        let probe = try await RichPushBinary.run(
            ["bench", "--serve", Fixtures.assets, "--devices", "10", "--no-progress"], directory: Fixtures.root)
        #expect(probe.status == 0, "\(probe.stderr)")
        let lead = max(TimeScale.scaled(.seconds(25)), (ContinuousClock.now - calibration) * 4 + .seconds(4))
        // Whole milliseconds, as the option is given and the report writes it.
        let start = try WallTime(
            parsing: String(format: "%.3f", (WallClock.read().time + lead + .seconds(1)).epochSeconds))
        var running: [RunningBinary] = []
        var launched: [WallTime] = []
        for shard in 1...3 {
            if shard > 1 { try await Task.sleep(for: .seconds(2)) }
            launched.append(WallClock.read().time)
            running.append(
                try RichPushBinary.start(
                    [
                        "bench", "--serve", Fixtures.assets, "--devices", "30", "--shard", "\(shard)/3", "--start-at",
                        start.rfc3339, "--json", folder + "/shard-\(shard).json",
                        "--no-progress",
                    ], directory: Fixtures.root))
        }
        for (index, process) in running.enumerated() {
            let run = await process.wait()
            #expect(run.status == 0, "shard \(index + 1): \(run.stderr)")
            #expect(run.stderr.contains("waiting ") && run.stderr.contains(" for --start-at "), "\(run.stderr)")
        }
        // Launched at least 4 s apart, as measured.
        let spread = launched[2] - launched[0]
        #expect(spread >= .seconds(4))
        let spreadMilliseconds = spread.inMilliseconds
        // Each report: its own start, lateness and clock.
        let files = (1...3).map { folder + "/shard-\($0).json" }
        for (index, file) in files.enumerated() {
            let report = try BenchReport.read(try Data(contentsOf: URL(fileURLWithPath: file)))
            let record = try #require(report.start?.shards.first)
            #expect(report.start?.at == start.rfc3339 && record.shard == index + 1)
            #expect(record.clock == "CLOCK_REALTIME")
            // Started on time, though launched seconds apart: a wait's wake-up is late by milliseconds,
            // and in any case by less than the launches' spread.
            let lateness = try #require(record.latenessMilliseconds)
            #expect(
                lateness >= 0 && lateness < spreadMilliseconds,
                "shard \(index + 1) late by \(lateness) ms, launches \(spreadMilliseconds) ms apart")
            #expect(record.beganEpochSeconds >= start.epochSeconds)
        }
        // Began closer together than they were launched: the wait, not the launch, set the start.
        let began = try files.map { try BenchReport.read(Data(contentsOf: URL(fileURLWithPath: $0))) }
            .compactMap { $0.start?.shards.first?.beganEpochSeconds }
        #expect(
            began.count == 3 && ((began.max() ?? 0) - (began.min() ?? 0)) * 1000 < spreadMilliseconds, "\(began)")
        let merged = try await RichPushBinary.run(["report", "merge"] + files + ["--html", folder + "/merged.html"])
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(!merged.stderr.contains("warning: the shards began"), "\(merged.stderr)")
        let report = try BenchReport.read(Data(merged.stdout.utf8))
        #expect(report.devices == 30 && report.attached == 30)
        #expect(report.start?.shards.map(\.shard) == [1, 2, 3])
        // One burst: every arrival of the three shards within less than the launches' spread of the
        // shared start (launched shards would have arrived that far apart).
        let seconds = Int(spreadMilliseconds / 1000)
        #expect(
            report.timeline.prefix(seconds).reduce(0) { $0 + $1.arrivals } == 30,
            "\(report.timeline.map(\.arrivals))")
        // The burst timeline too.
        let burst = try #require(report.burstTimeline)
        let withinSpread = burst.buckets.prefix(max(1, Int(spreadMilliseconds) / burst.bucketMilliseconds))
        #expect(withinSpread.reduce(0) { $0 + $1.arrivals } == 30, "\(burst.buckets.map(\.arrivals))")
        #expect(merged.stderr.contains("Start: --start-at \(start.rfc3339); 3 shards began"), "\(merged.stderr)")
        let html = try String(contentsOfFile: folder + "/merged.html", encoding: .utf8)
        #expect(html.contains("Start: --start-at \(start.rfc3339); 3 shards began"))
        let problems = JSONSchemaCheck.violations(
            of: try JSONSerialization.jsonObject(with: Data(merged.stdout.utf8)),
            against: try BenchCommandTests.schema())
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    /// Ctrl-C while a shard waits for its start ends it at once (exit 130): no device runs, and the
    /// report says every device was not started.
    @Test func anInterruptedWaitRunsNoDevice() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let start = WallClock.read().time + .seconds(600)
        let running = try RichPushBinary.start(
            [
                "bench", "--serve", Fixtures.assets, "--devices", "4", "--start-at", start.rfc3339, "--json",
                folder + "/r.json", "--no-progress",
            ], directory: Fixtures.root)
        // Its report is open (before its server, trial and wait): from then on a Ctrl-C ends it with the
        // report; a loaded machine takes longer than any fixed sleep to get there. Then into the wait.
        let opened = await Fixtures.waitUntil(seconds: 60) { running.openFiles.contains { $0.hasPrefix(folder + "/") } }
        #expect(opened, "the report was never opened: \(running.openFiles)")
        try await Task.sleep(for: .seconds(2))
        running.signal(SIGINT)
        let run = await running.wait()
        #expect(run.status == 130, "\(run.stderr)")
        let report = try BenchReport.read(try Data(contentsOf: URL(fileURLWithPath: folder + "/r.json")))
        #expect(report.devices == 0 && report.notStarted == 4)
    }

    /// A start a day and more ahead, or minutes past, is refused with the clock's reading (exit 64)
    /// before the server starts or a report opens.
    @Test func aStartOutsideItsWindowIsAUsageError() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let now = WallClock.read().time
        for (time, says) in [
            (now + .seconds(90_000), "ahead; a shard waits 24 h at most"), (now + .seconds(-600), "ago"),
        ] {
            let run = try await RichPushBinary.run(
                [
                    "bench", "--serve", Fixtures.assets, "--devices", "2", "--start-at", time.rfc3339, "--json",
                    folder + "/report.json",
                ], directory: Fixtures.root)
            #expect(run.status == 64 && run.stderr.contains(says), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder + "/report.json"))
        }
        let malformed = try await RichPushBinary.run([
            "bench", "--url", "hero.jpg", "--devices", "2", "--start-at", "soon",
        ])
        #expect(malformed.status == 64 && malformed.stderr.contains("--start-at takes RFC 3339"), "\(malformed.stderr)")
        // Up to a minute late: it runs at once, says so, and records the lateness (5 s past when it is
        // launched: the runs above took their time).
        let late = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "--devices", "2", "--start-at",
                (WallClock.read().time + .seconds(-5)).rfc3339,
                "--json", folder + "/late.json", "--no-progress",
            ], directory: Fixtures.root)
        #expect(late.status == 0 && late.stderr.contains("ago: starting at once"), "\(late.stderr)")
        let report = try BenchReport.read(try Data(contentsOf: URL(fileURLWithPath: folder + "/late.json")))
        #expect((report.start?.shards.first?.latenessMilliseconds ?? 0) >= 5000)
    }
}
