import Foundation
import RichPush
import RichPushRuns
import TestSupport
import Testing

/// `report merge`: the command line's checks, which kind of report the files are, bench shards merged
/// with the thresholds of the whole run, and batch summaries with their shard warning and threshold.
@Suite struct ReportMergeTests {
    /// Messages spell settings as the command line does, as users read them.
    init() { useCommandLineSpelling() }

    let config = BenchReport.Config(
        devices: 4, arrival: "burst", rampSeconds: nil, ratePerSecond: nil, jitterSeconds: 0, seed: 1,
        concurrency: 4, connections: "fresh", budgetSeconds: 30, shardCount: 2)
    let target = BenchReport.Target(url: "https://cdn.example.com/hero.jpg", type: "jpg", payload: nil)

    /// Writes shard `shard` of a 4-device bench run (every other device, one of them failed) to `folder`.
    func benchShard(_ shard: Int, in folder: String) throws -> String {
        var report = BenchReport(target: target, config: config, shards: [shard])
        for index in ArrivalSchedule.indices(devices: 4, shard: shard, of: 2) {
            let failed = index == 3
            report.add(
                DeviceResult(
                    verdict: failed ? .expired : .attached, reason: failed ? .deadlineExceeded : .ok, bytes: 4207,
                    dns: .microseconds(20), connect: .microseconds(200), tls: .microseconds(900),
                    firstByte: .milliseconds(5), download: .milliseconds(6), scheduled: .zero,
                    started: .zero, ended: .milliseconds(7), heldBack: false))
        }
        report.durationSeconds = 1
        report.finalize()
        let path = folder + "/shard-\(shard).json"
        try report.json().write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    /// Writes a batch summary of `requested` payloads, `attached` of them shown, for shard `shard` of `count`.
    func batchShard(_ shard: Int, of count: Int, requested: Int, attached: Int, in folder: String) throws -> String {
        let json = """
            {"total": \(requested), "recorded": \(requested), "processed": \(requested), "skipped": 0,
             "interrupted": false, "verdicts": {"attached": \(attached)}, "reasons": {}, "requested": \(requested),
             "attached": \(attached), "display_rate": \(Double(attached) / Double(requested)), "download_ms": {},
             "elapsed_seconds": 1, "shards": [\(shard)], "shard_count": \(count)}
            """
        let path = folder + "/summary-\(shard).json"
        try json.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    @Test func checksTheCommandLineFirst() throws {
        let none: [ReportMerge.ThresholdText] = []
        #expect(
            isUsage(
                setupError { _ = try ReportMerge(files: [], htmlPath: nil, thresholds: none) },
                "a merge needs at least one JSON report"))
        // A file that cannot be read is taken for a bench report; merging it says which file.
        let merge = try ReportMerge(files: ["/nonexistent/a.json"], htmlPath: "x.html", thresholds: none)
        #expect(!merge.isBatch && merge.files == ["/nonexistent/a.json"])
        #expect(
            isUnusable(setupError { _ = try merge.benchReport() }, "cannot read '/nonexistent/a.json'"))
    }

    @Test func mergesBenchShardsWithTheWholeRunsThresholds() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let files = [try benchShard(1, in: folder), try benchShard(2, in: folder)]
        let merge = try ReportMerge(
            files: files, htmlPath: nil, thresholds: [.init("display>=80%")])
        let report = try merge.benchReport().value
        #expect(report.devices == 4 && report.attached == 3 && report.shards == [1, 2])
        // 75% shown: the merged run fails display>=80% although shard 1 alone (100%) would pass; the
        // defaults (would_crash==0, configuration_error==0) follow it and pass.
        #expect(report.thresholds.map(\.expression) == ["display>=80%", "would_crash==0", "configuration_error==0"])
        #expect(report.thresholds.map(\.passed) == [false, true, true] && report.passed == false)
        // The same shard twice does not merge, and the message names the file.
        let twice = try ReportMerge(files: [files[0], files[0]], htmlPath: nil, thresholds: [])
        let error = setupError { _ = try twice.benchReport() }
        #expect(error?.code == .unusableInput && error?.message.hasPrefix(files[0] + " is shard 1 of 2 again") == true)
    }

    @Test func mergesBatchSummariesAndSaysWhatIsMissing() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try batchShard(1, of: 3, requested: 10, attached: 10, in: folder)
        let second = try batchShard(2, of: 3, requested: 10, attached: 5, in: folder)
        let merge = try ReportMerge(
            files: [first, second], htmlPath: nil, thresholds: [.init("display>=80%")])
        #expect(merge.isBatch)
        let merged = try merge.batchSummary()
        let summary = merged.value
        #expect(summary.requested == 20 && summary.attached == 15)
        #expect(merged.warnings.last == "shard 3 of 3 is missing: the merged report covers only the others")
        #expect(
            GateDecision(summary).failed.map(\.message) == [
                "display 75.0% fails the threshold display>=80% by 5 points"
            ])
        let lenient = try ReportMerge(
            files: [first, second], htmlPath: nil, thresholds: [.init("display>=75%")])
        #expect(GateDecision(try lenient.batchSummary().value).passed)
        // Every shard required: the missing one is a refusal.
        let strict = try ReportMerge(
            files: [first, second], htmlPath: nil, thresholds: [], requireAllShards: true)
        #expect(
            setupError { _ = try strict.batchSummary() }?.message.hasPrefix(
                "shard 3 of 3 is missing: every shard is required") == true)
        // An HTML page and latency thresholds belong to bench reports.
        #expect(
            isUsage(
                setupError { _ = try ReportMerge(files: [first], htmlPath: "x.html", thresholds: []) },
                "an HTML report goes with bench reports; these are batch summaries"))
        let p99 = setupError {
            _ = try ReportMerge(files: [first], htmlPath: nil, thresholds: [.init("p99<=5ms")])
        }
        #expect(p99?.code == .invalidValue && p99?.message.contains("names no metric 'p99'") == true)
        // A later file that is not a summary is named.
        let mixed = try ReportMerge(files: [first, folder + "/none.json"], htmlPath: nil, thresholds: [])
        #expect(
            isUnusable(
                setupError { _ = try mixed.batchSummary() },
                "\(folder)/none.json is not a batch summary.json (give every shard's OUTDIR/summary.json)"))
    }

    /// Shard `shard`'s bench report as JSON, with `edit` applied to its text (the way a damaged or
    /// hand-made file differs from one bench wrote).
    func editedBenchShard(_ shard: Int, in folder: String, _ edit: (String) -> String) throws -> (String, Bool) {
        let path = try benchShard(shard, in: folder)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let edited = edit(text)
        try edited.write(toFile: path, atomically: false, encoding: .utf8)
        return (path, edited != text)
    }

    /// Counts near `Int.max` that add up past it, negative counts, and timelines that would make the
    /// merge allocate without bound are damaged inputs (exit 65, the field named), never a trap.
    @Test(arguments: [
        ("\"devices\" : 2", "\"devices\" : 9223372036854775800", "devices + not_started is 9223372036854775800"),
        ("\"attached\" : 2", "\"attached\" : -2", "attached is -2"),
        ("\"bytes\" : 8414", "\"bytes\" : 9223372036854775807", "bytes adds up past"),
        ("\"second\" : 0", "\"second\" : 400000000000", "timeline[0] is second 400000000000"),
        ("\"count\" : 2", "\"count\" : 18446744073709551615", "adds up past 18446744073709551615"),
        ("\"min\" : ", "\"min\" : 9", "do not agree"),
        (
            "\"status_codes\" : {", "\"status_codes\" : {\"200\": 9223372036854775807, \"201\": 1",
            "status_codes adds up"
        ),
        ("\"status_codes\" : {", "\"status_codes\" : {\"200\": 3", "status_codes count 3 devices"),
        ("\"shard_count\" : 2", "\"shard_count\" : 1000000000000000000", "do not fit"),
        // Parts larger than the whole, a duration no run lasts, and a key written twice.
        ("\"not_started\" : 0", "\"not_started\" : 9223372036854775807", "devices + not_started adds up past"),
        ("\"not_started\" : 0", "\"not_started\" : 3", "devices + not_started is 5, more than config.devices 4"),
        ("\"attached\" : 2", "\"attached\" : 3", "attached is 3, more than devices 2"),
        ("\"duration_seconds\" : 1", "\"duration_seconds\" : 1e308", "longer than the 604800 s"),
        ("\"bytes\" : 8414,", "\"bytes\" : 8414, \"bytes\" : 1,", "'bytes' appears more than once"),
    ])
    func refusesDamagedBenchReports(find: String, replace: String, says: String) throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (first, firstEdited) = try editedBenchShard(1, in: folder) {
            $0.replacingOccurrences(of: find, with: replace)
        }
        let (second, secondEdited) = try editedBenchShard(2, in: folder) {
            $0.replacingOccurrences(of: find, with: replace)
        }
        try #require(firstEdited || secondEdited, "the edit changed a report")
        let merge = try ReportMerge(files: [first, second], htmlPath: nil, thresholds: [])
        let error = setupError { _ = try merge.benchReport() }
        #expect(error?.code == .unusableInput, "\(String(describing: error))")
        #expect(error?.message.contains(says) == true, "\(String(describing: error))")
    }

    @Test func refusesDamagedBatchSummaries() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let huge = try batchShard(1, of: 2, requested: Int.max - 5, attached: 10, in: folder)
        let more = try batchShard(2, of: 2, requested: 10, attached: 10, in: folder)
        let overflow = try ReportMerge(files: [huge, more], htmlPath: nil, thresholds: [])
        let error = setupError { _ = try overflow.batchSummary() }
        #expect(
            error?.code == .unusableInput && error?.message.contains("adds up past") == true,
            "\(String(describing: error))"
        )
        let negative = try batchShard(2, of: 2, requested: 10, attached: -1, in: folder)
        let refused = try ReportMerge(files: [negative], htmlPath: nil, thresholds: [])
        let second = setupError { _ = try refused.batchSummary() }
        #expect(second?.code == .unusableInput && second?.message.contains("attached is -1") == true)
        let outside = try batchShard(3, of: 2, requested: 10, attached: 10, in: folder)
        let wrongShard = try ReportMerge(files: [outside], htmlPath: nil, thresholds: [])
        #expect(setupError { _ = try wrongShard.batchSummary() }?.message.contains("do not fit shard_count 2") == true)
    }
}
