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
        let options = [
            "--no-progress", "--budget", "3", "--cacert", Fixtures.caFile, "--connect-to",
            "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)",
        ]
        func batch(_ out: String, _ extra: [String] = []) async throws -> BinaryRun {
            try await RichPushBinary.run(
                ["batch", SamplePayloads.folder, "--out", folder + "/" + out] + options + extra)
        }
        _ = try await batch("whole")
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
        #expect(merged.status == 0, "\(merged.stderr)")
        let mergedSummary = try JSONValue.parse(Array(merged.stdout.utf8))
        let wholeSummary = try JSONValue.parse(
            Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/whole/summary.json"))))
        for key in ["total", "recorded", "requested", "attached", "display_rate", "verdicts", "reasons"] {
            #expect(mergedSummary[key] == wholeSummary[key], "\(key)")
        }
        #expect(mergedSummary["shards"] == .array([.number("1"), .number("2")]))
        #expect(mergedSummary["download_histogram"]?["count"] == wholeSummary["download_histogram"]?["count"])
        #expect(OutputSchemas.violations(of: merged.stdout, against: "batch-summary").isEmpty)
    }
}
