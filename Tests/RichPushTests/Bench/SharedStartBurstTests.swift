import AssetServer
import Foundation
import RichPush
import RichPushRuns
import TestSupport
import Testing

/// A shard that began late against the shared start: its timeline counts from the shared start, and
/// its latency does not include the lateness.
@Suite struct SharedStartBurstTests {
    @Test func aLateShardsTimelineCountsFromTheSharedStart() async throws {
        useCommandLineSpelling()
        let rig = try LocalRig()
        defer { rig.cleanUp() }
        let url = "https://cdn.example.com/hero.jpg"
        let service = ServiceExtension(
            engine: rig.engine, store: nil, policy: Fixtures.extensionPolicy(mapping: rig.server, budget: .seconds(60)))
        let payload = #"{"aps":{"alert":"b","mutable-content":1},"ab":{"att":{"url":"\#(url)","type":"jpg"}}}"#
        func report(lateness: Duration) async -> BenchReport {
            var report = BenchReport(
                target: .init(url: url, type: "jpg", payload: nil),
                config: .init(
                    devices: 4, arrival: "burst", rampSeconds: nil, ratePerSecond: nil, jitterSeconds: 0, seed: 1,
                    concurrency: 4, connections: "fresh", budgetSeconds: 60, shardCount: 1),
                shards: [1])
            var runner = BurstRunner(
                service: service, payload: Array(payload.utf8), schedule: ArrivalSchedule(devices: 4, model: .burst),
                indices: Array(0..<4), concurrency: 4, timeLimit: .seconds(60))
            runner.lateness = lateness
            await runner.run(into: &report)
            return report
        }
        let onTime = await report(lateness: .zero)
        let late = await report(lateness: .milliseconds(3500))
        #expect(onTime.attached == 4 && late.attached == 4)
        #expect(onTime.timeline.first?.arrivals == 4)
        // 3.5 s late: the four arrivals are in second 3 of the shared timeline, none before.
        #expect(late.timeline.count >= 4)
        #expect(late.timeline.prefix(3).allSatisfy { $0.arrivals == 0 && $0.inFlight == 0 })
        #expect(late.timeline[3].arrivals == 4)
        #expect(late.timeline.reduce(0) { $0 + $1.completions } == 4)
        // The burst timeline (and every series it carries) counts from the shared start too: no
        // arrival and no new connection in its first 3.5 s.
        let burst = try #require(late.burstTimeline)
        let width = burst.bucketMilliseconds
        let early = burst.buckets.prefix(3500 / width)
        #expect(early.allSatisfy { $0.arrivals == 0 && $0.newConnections == 0 }, "\(burst.buckets.map(\.arrivals))")
        #expect(burst.buckets.reduce(0) { $0 + $1.arrivals } == 4)
        // Latency counts from each device's own arrival: no longer than the run itself took (its duration
        // counts from its own start), not that plus the 3.5 s the shard was late. The line between the two
        // is half the lateness past the duration, however slowly a loaded machine ran the devices.
        let p99 = late.percentilesMilliseconds["end_to_end"]?["p99"] ?? .infinity
        #expect(
            p99 < late.durationSeconds * 1000 + 1750,
            "end-to-end p99 \(p99) ms in a run of \(late.durationSeconds) s includes the lateness")
    }
}
