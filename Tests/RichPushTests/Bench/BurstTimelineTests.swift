import Foundation
import RichPush
import RichPushRuns
import Testing

/// The fine timeline: its bucket follows the run's length, its counts add up, and shards merge exactly.
@Suite struct BurstTimelineTests {
    let target = BenchReport.Target(url: "https://cdn.example.com/hero.jpg", type: "jpg", payload: nil)
    let config = BenchReport.Config(
        devices: 300, arrival: "burst", rampSeconds: nil, ratePerSecond: nil, jitterSeconds: 0, seed: 1,
        concurrency: 100, connections: "fresh", budgetSeconds: 30, shardCount: 2)

    /// Device `i` of a run that lasts `length`: it arrives spread over the run and takes 30 ms.
    func device(_ i: Int, of count: Int, over length: Duration) -> DeviceResult {
        let scheduled = length * (Double(i) / Double(count))
        var device = DeviceResult(
            verdict: i % 10 == 0 ? .fallback : .attached, reason: i % 10 == 0 ? .httpStatus : .ok, status: 200,
            bytes: 1000, scheduled: scheduled, started: scheduled, ended: scheduled + .milliseconds(30))
        device.cache = i % 4 == 0 ? .miss : .hit
        device.connectionsMade = i % 2
        device.httpVersion = "2"
        return device
    }

    func report(_ length: Duration, count: Int = 300, shard: Int? = nil) -> BenchReport {
        var report = BenchReport(target: target, config: config, shards: shard.map { [$0] } ?? [1, 2])
        for i in 0..<count where shard == nil || i % 2 == (shard ?? 1) - 1 {
            report.add(device(i, of: count, over: length))
        }
        report.finalize()
        return report
    }

    @Test(arguments: [
        (Duration.milliseconds(500), 10), (.milliseconds(1500), 20), (.seconds(4), 100), (.seconds(12), 100),
        (.seconds(25), 200), (.seconds(120), 1000), (.seconds(1200), 10_000),
    ])
    func theBucketFitsTheRunsLength(_ length: Duration, _ milliseconds: Int) throws {
        let timeline = try #require(report(length).burstTimeline)
        #expect(timeline.bucketMilliseconds == milliseconds)
        #expect(timeline.buckets.count <= BurstTimeline.maxBuckets)
    }

    @Test func countsAddUpToTheDevices() throws {
        let whole = report(.seconds(3))
        let timeline = try #require(whole.burstTimeline)
        #expect(timeline.buckets.map(\.arrivals).reduce(0, +) == 300)
        #expect(timeline.buckets.map(\.completions).reduce(0, +) == 300)
        #expect(timeline.buckets.map(\.failures).reduce(0, +) == 30)
        #expect(timeline.buckets.map(\.newConnections).reduce(0, +) == 150)
        #expect(timeline.buckets.map(\.hits).reduce(0, +) == 225)
        #expect(timeline.buckets.map(\.misses).reduce(0, +) == 75)
        #expect(timeline.buckets.map(\.bytes).reduce(0, +) == 300_000)
        // 3 s (100 ms buckets), 100 devices a second, 30 ms each: the 10 that start in a bucket and up to
        // 3 still running from the one before.
        #expect(timeline.bucketMilliseconds == 100)
        #expect(timeline.peakInFlight == 0)
        #expect(timeline.buckets.dropLast().allSatisfy { (10...13).contains($0.inFlight) })
        #expect(timeline.peakBytesPerSecond > 0)
        #expect(whole.httpVersions == ["2": 300])
        #expect(whole.cache?.hits == 225 && whole.cache?.misses == 75 && whole.cache?.hitRatio == 0.75)
    }

    @Test func shardsMergeIntoTheWholeRunsTimeline() throws {
        let whole = report(.seconds(2))
        var first = try BenchReport.read(Data(try report(.seconds(2), shard: 1).json().utf8))
        let second = try BenchReport.read(Data(try report(.seconds(2), shard: 2).json().utf8))
        try first.merge(second)
        #expect(first.burstTimeline == whole.burstTimeline)
        #expect(first.cache == whole.cache)
        #expect(first.httpVersions == whole.httpVersions)
    }

    @Test func aShardThatRanLongerCoarsensTheOther() throws {
        var short = report(.milliseconds(400), shard: 1)
        let long = report(.seconds(10), shard: 2)
        #expect(short.burstTimeline?.bucketMilliseconds == 10)
        try short.merge(long)
        let merged = try #require(short.burstTimeline)
        #expect(merged.bucketMilliseconds == 100)
        #expect(merged.buckets.map(\.completions).reduce(0, +) == 300)
    }

    @Test func aDamagedBucketWidthIsRefused() throws {
        var damaged = report(.seconds(1))
        damaged.burstTimeline?.bucketMilliseconds = 7
        #expect(throws: BenchReportError.self) { try BenchReport.read(Data(try damaged.json().utf8)) }
    }
}
