import Foundation
import TestSupport
import Testing

extension SignalTests {
    /// `report merge` reads and merges in a loop that never looked at a signal: SIGTERM in the middle of
    /// 2,000 shard reports let it merge them all and write `--json`. It now ends at once, exit 130,
    /// with no output. The signal is sent once richpush has a shard report open (the merge is under
    /// way), and the proof is the order of events: the output it would commit last is not there.
    @Test func reportMergeStopsAtTheFirstSignal() async throws {
        let folder = try Fixtures.temporaryFolder("richpush-merge-signal")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bench = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "--devices", "3", "--no-progress", "--json",
                folder + "/one.json",
            ], directory: Fixtures.root)
        #expect(bench.status == 0, "\(bench.stderr)")
        let one = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/one.json")))
                as? [String: Any])
        let count = 2000
        var files: [String] = []
        for shard in 1...count {
            var report = one
            var config = report["config"] as? [String: Any] ?? [:]
            config["shard_count"] = count
            config["devices"] = 3 * count
            report["config"] = config
            report["shards"] = [shard]
            var identity = report["identity"] as? [String: Any] ?? [:]
            identity["shard_count"] = count
            identity["runs"] = [["id": String(format: "%016x", shard), "shard": shard]]
            report["identity"] = identity
            let file = folder + String(format: "/shard-%04d.json", shard)
            try JSONSerialization.data(withJSONObject: report).write(to: URL(fileURLWithPath: file))
            files.append(file)
        }
        let merged = folder + "/merged.json"
        let running = try RichPushBinary.start(["report", "merge"] + files + ["--json", merged])
        let deadline = Date().addingTimeInterval(60)
        while running.isRunning, Date() < deadline, !running.openFiles.contains(where: { $0.contains("/shard-") }) {
            usleep(100)
        }
        running.signal(SIGTERM)
        let run = await running.wait()
        #expect(run.status == 130, "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: merged), "the merge went on after SIGTERM")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).count == count + 1, "no temporary left")
    }
}
