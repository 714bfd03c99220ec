import Foundation
import RichPush
import TestSupport
import Testing

/// `richpush bench` and `richpush report merge` as a user runs them.
@Suite struct BenchCommandTests {
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
        #expect(report.histograms["end_to_end"]?.count == 60)
        let html = try String(contentsOfFile: folder + "/merged.html", encoding: .utf8)
        #expect(html.contains("<svg") && html.contains("100%"))
    }

    @Test func exitsWith130WhenInterrupted() async throws {
        let running = try RichPushBinary.start(
            ["bench", "--serve", Fixtures.assets, "--url", "hero.jpg?delay=20000", "--devices", "20", "--no-progress"],
            directory: Fixtures.root)
        try await Task.sleep(for: .milliseconds(1500))
        running.signal(SIGINT)
        let run = await running.wait()
        #expect(run.status == 130, "\(run.stderr)")
        #expect(run.stderr.contains("interrupted"))
        #expect(run.stdout.contains("Not run to completion (time limit or interruption): 20 devices"), "\(run.stdout)")
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
}
