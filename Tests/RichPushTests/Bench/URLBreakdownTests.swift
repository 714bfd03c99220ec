import Foundation
import RichPush
import RichPushRuns
import Testing

/// Results by URL: a row per entry when there are few, the spread when there are many; both merge.
@Suite struct URLBreakdownTests {
    let config = BenchReport.Config(
        devices: 600, arrival: "burst", rampSeconds: nil, ratePerSecond: nil, jitterSeconds: 0, seed: 1,
        concurrency: 100, connections: "fresh", budgetSeconds: 30, shardCount: 2)
    let target = BenchReport.Target(url: "https://cdn.example.com/0.jpg", type: "jpg", payload: nil)

    func list(_ count: Int) throws -> URLList {
        try URLList(
            parsing: (0..<count).map { "https://cdn.example.com/\($0).jpg" }.joined(separator: "\n"), file: "urls.txt")
    }

    /// Device `i` requests entry `list.entry(of: i)`; entry 3's devices fail, entry 0's miss the cache.
    func report(_ list: URLList, shard: Int?) -> BenchReport {
        var report = BenchReport(target: target, config: config, shards: shard.map { [$0] } ?? [1, 2])
        report.urls = URLBreakdown(list)
        for i in 0..<600 where shard == nil || i % 2 == (shard ?? 1) - 1 {
            let entry = list.entry(of: i)
            var device = DeviceResult(
                verdict: entry == 3 ? .fallback : .attached, reason: entry == 3 ? .httpStatus : .ok, status: 200,
                bytes: 10, scheduled: .zero, started: .zero, ended: .milliseconds(Int64(5 + entry)))
            device.entry = entry
            device.cache = entry == 0 ? .miss : .hit
            report.add(device)
        }
        report.finalize()
        return report
    }

    @Test func aFewEntriesGetARowEach() throws {
        let list = try list(4)
        let whole = report(list, shard: nil)
        let rows = try #require(whole.urls?.orderedRows)
        #expect(rows.map(\.entry) == (0..<4).map { "https://cdn.example.com/\($0).jpg" })
        #expect(rows.map(\.row.devices).reduce(0, +) == 600)
        #expect(rows.allSatisfy { (149...151).contains($0.row.devices) })
        #expect(rows[3].row.displayRate == 0 && rows[2].row.displayRate == 1)
        #expect(rows[0].row.hitRatio == 0 && rows[1].row.hitRatio == 1)
        #expect(rows[2].row.latencyMilliseconds["p50"] == 7)
        #expect(BenchSummary.text(whole).contains("https://cdn.example.com/3.jpg"))
    }

    @Test func manyEntriesGetTheirSpread() throws {
        let list = try list(30)
        let whole = report(list, shard: nil)
        let urls = try #require(whole.urls)
        #expect(urls.rows == nil)
        #expect(urls.entryDevices?.reduce(0, +) == 600)
        let spread = try #require(urls.spread)
        #expect(spread.unused == 0 && (19...21).contains(spread.devicesPerEntry["p50"] ?? 0))
        #expect(spread.displayRatePerEntry["min"] == 0 && spread.displayRatePerEntry["max"] == 1)
        #expect(spread.worst == ["https://cdn.example.com/3.jpg"])
        let text = BenchSummary.text(whole)
        #expect(text.contains("URLs: 30 entries"))
        #expect(text.contains("Least displayed: https://cdn.example.com/3.jpg."))
    }

    @Test(arguments: [4, 30])
    func shardsMergeIntoTheWholeBreakdown(_ entries: Int) throws {
        let list = try list(entries)
        var first = try BenchReport.read(Data(try report(list, shard: 1).json().utf8))
        try first.merge(try BenchReport.read(Data(try report(list, shard: 2).json().utf8)))
        #expect(first.urls == report(list, shard: nil).urls)
    }
}
