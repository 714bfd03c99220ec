import Foundation
import RichPush
import RichPushRuns
import TestSupport
import Testing

/// `report merge` and the shards' start records: one shared start lines the timelines up; shards that
/// began apart, without one start, or on unsynchronized clocks are warned about.
@Suite struct StartAlignmentTests {
    init() { useCommandLineSpelling() }

    let at = WallTime(nanoseconds: 1_796_148_000 * 1_000_000_000)

    /// Shard `shard`'s start, `late` after `at` (or at `at + late` without a shared start).
    func start(_ shard: Int, late: Duration, shared: Bool = true, synchronized: Bool? = true) -> BenchReport.Start {
        let reading = WallClock.Reading(
            time: at + late, synchronized: synchronized, maxError: .milliseconds(16), estimatedError: .microseconds(500)
        )
        return BenchReport.Start(
            at: shared ? at.rfc3339 : nil,
            shards: [.init(shard: shard, reading: reading, sharedStart: shared ? at : nil)])
    }

    func warnings(_ starts: [BenchReport.Start?]) -> [String] {
        var alignment = StartAlignment()
        for (index, start) in starts.enumerated() { alignment.admit(file: "shard-\(index + 1).json", start: start) }
        return alignment.warnings
    }

    @Test func recordsLatenessAndTheClock() {
        let record = start(2, late: .microseconds(3250)).shards[0]
        #expect(record.shard == 2 && record.latenessMilliseconds == 3.25)
        #expect(record.began == "2026-12-01T18:00:00.003Z" && record.beganEpochSeconds == 1_796_148_000.00325)
        #expect(record.clock == "CLOCK_REALTIME" && record.clockSynchronized == true)
        #expect(record.clockMaxErrorMilliseconds == 16)
        #expect(start(1, late: .seconds(2), shared: false).shards[0].latenessMilliseconds == nil)
    }

    @Test func shardsThatStartedTogetherRaiseNoWarning() {
        #expect(
            warnings([start(1, late: .milliseconds(2)), start(2, late: .milliseconds(40)), start(3, late: .zero)])
                .isEmpty)
        #expect(
            warnings([start(1, late: .zero, shared: false), start(2, late: .milliseconds(90), shared: false)]).isEmpty)
        #expect(warnings([nil, nil]).isEmpty)
    }

    @Test func warnsWhenShardsBeganMoreThanTheLimitApart() {
        let found = warnings([
            start(1, late: .milliseconds(5)), start(2, late: .milliseconds(1205)), start(3, late: .zero),
        ])
        #expect(
            found == [
                "the shards began 1205.0 ms apart against --start-at 2026-12-01T18:00:00.000Z (shard 2 1205.0 ms "
                    + "late, shard 3 0.0 ms): the host saw the burst spread by that much; the merged timeline counts "
                    + "from the shared start and shows it as it happened. Give the pods more time before the start"
            ])
        // Just over 100 ms warns; 100 ms does not.
        #expect(warnings([start(1, late: .zero), start(2, late: .milliseconds(101))]).count == 1)
        #expect(warnings([start(1, late: .zero), start(2, late: .milliseconds(100))]).isEmpty)
    }

    @Test func warnsThatOwnStartsShowABurstThatDidNotHappen() {
        let found = warnings([start(1, late: .zero, shared: false), start(2, late: .seconds(4), shared: false)])
        #expect(found.count == 1)
        #expect(
            found.first?.hasPrefix("the shards began 4.0 s apart (shard 1 first, shard 2 last) without --start-at")
                == true)
    }

    @Test func warnsAboutMixedStartsOlderReportsAndUnsynchronizedClocks() {
        let mixed = warnings([start(1, late: .zero), start(2, late: .zero, shared: false)])
        #expect(mixed.count == 1)
        #expect(
            mixed.first?.hasPrefix(
                "the shards were not given one --start-at (shard-1.json at 2026-12-01T18:00:00.000Z, shard-2.json "
                    + "without --start-at)") == true)
        let older = warnings([start(1, late: .zero), nil])
        #expect(older.first?.hasPrefix("shard-2.json records no start time") == true)
        let unsynchronized = warnings([start(1, late: .zero), start(2, late: .zero, synchronized: false)])
        #expect(
            unsynchronized == [
                "the clock of shard 2 was not synchronized (the kernel's NTP state): its start may be off by more "
                    + "than its lateness shows"
            ])
    }

    /// Three shards with one start merge their start records; the merge keeps the shared start and
    /// every shard's, and a record that cannot be one is a damaged file.
    @Test func mergedReportsKeepEveryShardsStart() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let config = BenchReport.Config(
            devices: 3, arrival: "burst", rampSeconds: nil, ratePerSecond: nil, jitterSeconds: 0, seed: 1,
            concurrency: 3, connections: "fresh", budgetSeconds: 30, shardCount: 3)
        let target = BenchReport.Target(url: "https://cdn.example.com/hero.jpg", type: "jpg", payload: nil)
        var files: [String] = []
        for shard in 1...3 {
            var report = BenchReport(target: target, config: config, shards: [shard])
            report.start = start(shard, late: .milliseconds(Int64(shard) * 70))
            report.durationSeconds = shard == 1 ? 2 : 1
            report.finalize()
            let path = folder + "/shard-\(shard).json"
            try report.json().write(toFile: path, atomically: false, encoding: .utf8)
            files.append(path)
        }
        let merged = try ReportMerge(files: files, htmlPath: nil, thresholds: []).benchReport()
        #expect(merged.value.start?.at == "2026-12-01T18:00:00.000Z")
        // From the shared start to the last end: shard 1 ran 2 s from 0.07 s, the others 1 s from 0.14 and
        // 0.21 s (the longest shard alone would say 2 s).
        #expect(merged.value.durationSeconds == 2.07)
        #expect(merged.value.start?.shards.map(\.shard) == [1, 2, 3])
        #expect(merged.value.start?.shards.map(\.latenessMilliseconds) == [70, 140, 210])
        // 210 - 70 = 140 ms apart: over the limit.
        // (These reports carry no run identity: the merge warns about that too.)
        let started = merged.warnings.filter { !$0.contains("without a run identity") }
        #expect(started.count == 1 && started[0].hasPrefix("the shards began 140.0 ms apart"), "\(started)")
        #expect(
            BenchSummary.text(merged.value).contains(
                "Start: --start-at 2026-12-01T18:00:00.000Z; 3 shards began 70.0 to 210.0 ms late (spread 140.0 ms; "
                    + "CLOCK_REALTIME, synchronized, max error 16.0 ms)."))
        #expect(HTMLReport.render(merged.value).contains("Start: --start-at 2026-12-01T18:00:00.000Z; 3 shards began"))
        // A start record naming a shard the run does not have is damage, not a start.
        var damaged = try String(contentsOfFile: files[0], encoding: .utf8)
        damaged = damaged.replacingOccurrences(of: "\"shard\" : 1", with: "\"shard\" : 9")
        #expect(throws: BenchReportError.self) { _ = try BenchReport.read(Data(damaged.utf8)) }
    }
}
