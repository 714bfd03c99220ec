import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// `batch --shard I/N` and `report merge` of the shards' summaries.
@Suite struct BatchShardTests {
    @Test func twoShardsAreDisjointCoverTheInputAndMergeIntoTheOneMachineSummary() async throws {
        let server = try Fixtures.startServer()
        defer { server.stop() }
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Every run must give each sample its expected verdict for the shards to merge into the whole:
        // room for those that attach on a loaded machine, under the slow samples' 40 s.
        let budget = SamplePayloads.budgetSeconds
        let options = [
            "--no-progress", "--budget", "\(budget)", "--cacert", Fixtures.caFile, "--connect-to",
            "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)",
        ]
        func batch(_ out: String, _ extra: [String] = []) async throws -> BinaryRun {
            try await RichPushBinary.run(
                ["batch", SamplePayloads.folder, "--out", folder + "/" + out] + options + extra)
        }
        let wholeRun = try await batch("whole")
        _ = try await batch("one", ["--shard", "1/2"])
        _ = try await batch("two", ["--shard", "2/2"])
        func inputs(_ out: String) throws -> Set<String> {
            Set(
                try String(contentsOfFile: folder + "/\(out)/results.ndjson", encoding: .utf8).split(separator: "\n")
                    .compactMap { line -> String? in
                        if case .string(let input)? = try JSONValue.parse(Array(line.utf8))["input"] { return input }
                        return nil
                    })
        }
        let (one, two, whole) = (try inputs("one"), try inputs("two"), try inputs("whole"))
        #expect(one.isDisjoint(with: two))
        #expect(one.union(two) == whole)
        #expect(whole.count == SamplePayloads.expectations.count)

        let merged = try await RichPushBinary.run([
            "report", "merge", folder + "/one/summary.json", folder + "/two/summary.json",
        ])
        // One gate: the merged campaign passes or fails as the one-machine batch did.
        #expect(merged.status == wholeRun.status, "\(merged.stderr)")
        #expect(!merged.stderr.contains("results.ndjson"), "a merged summary names no file that does not exist")
        let mergedSummary = try JSONValue.parse(Array(merged.stdout.utf8))
        let wholeSummary = try JSONValue.parse(
            Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/whole/summary.json"))))
        for key in ["total", "recorded", "requested", "attached", "display_rate", "verdicts", "reasons"] {
            #expect(mergedSummary[key] == wholeSummary[key], "\(key)")
        }
        #expect(mergedSummary["shards"] == .array([.number("1"), .number("2")]))
        #expect(mergedSummary["download_histogram"]?["count"] == wholeSummary["download_histogram"]?["count"])
        #expect(OutputSchemas.violations(of: merged.stdout, against: "batch-summary").isEmpty)

        // A shard given twice, a shard of another campaign, a missing shard with every shard required.
        let first = folder + "/one/summary.json"
        let twice = try await RichPushBinary.run(["report", "merge", first, first])
        #expect(twice.status == 65 && twice.stderr.contains("repeats shard 1"), "\(twice.stderr)")
        _ = try await batch("other", ["--shard", "2/2", "--budget", "\(budget + 1)"])
        let foreign = try await RichPushBinary.run(["report", "merge", first, folder + "/other/summary.json"])
        #expect(foreign.status == 65 && foreign.stderr.contains("comes from another run"), "\(foreign.stderr)")
        let partial = try await RichPushBinary.run(["report", "merge", first])
        #expect(partial.stderr.contains("shard 2 of 2 is missing"), "\(partial.stderr)")
        let strict = try await RichPushBinary.run(["report", "merge", first, "--require-all-shards"])
        #expect(strict.status == 65 && strict.stderr.contains("every shard is required"), "\(strict.stderr)")
    }
}
