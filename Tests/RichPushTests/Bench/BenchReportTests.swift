import Foundation
import RichPush
import Testing

/// The report: device accounting, the arrival models, and merging shards.
@Suite struct BenchReportTests {
    let config = BenchReport.Config(
        devices: 400, arrival: "ramp", rampSeconds: 4, ratePerSecond: nil, jitterSeconds: 0.5, seed: 7,
        concurrency: 100, connections: "fresh", budgetSeconds: 30, shardCount: 2)
    let target = BenchReport.Target(url: "https://cdn.example.com/hero.jpg", type: "jpg", payload: nil)

    /// A deterministic device result for global index `i` under `schedule`.
    func device(_ i: Int, schedule: ArrivalSchedule) -> DeviceResult {
        let scheduled = schedule.offset(of: i)
        let failed = i % 13 == 0
        let micros = Int64(2_000 + (i * 7919) % 900_000)
        return DeviceResult(
            verdict: failed ? .expired : .attached, reason: failed ? .deadlineExceeded : .ok,
            bytes: failed ? 100 : 4207, dns: .microseconds(20), connect: .microseconds(200 + Int64(i)),
            tls: .microseconds(900 + Int64(i)), firstByte: .microseconds(micros), download: .microseconds(micros + 50),
            scheduled: scheduled, started: scheduled + .microseconds(Int64(i % 5)),
            ended: scheduled + .microseconds(micros + 100), heldBack: i % 50 == 0)
    }

    @Test func mergedShardsEqualOneRunOfTheSameMeasurements() throws {
        let schedule = ArrivalSchedule(devices: 400, model: .ramp(.seconds(4)), jitter: .milliseconds(500), seed: 7)
        var whole = BenchReport(target: target, config: config, shards: [1, 2])
        var first = BenchReport(target: target, config: config, shards: [1])
        var second = BenchReport(target: target, config: config, shards: [2])
        for i in 0..<400 { whole.add(device(i, schedule: schedule)) }
        for i in ArrivalSchedule.indices(devices: 400, shard: 1, of: 2) { first.add(device(i, schedule: schedule)) }
        for i in ArrivalSchedule.indices(devices: 400, shard: 2, of: 2) { second.add(device(i, schedule: schedule)) }
        whole.durationSeconds = 5
        first.durationSeconds = 5
        second.durationSeconds = 4.5
        whole.finalize()
        first.finalize()
        second.finalize()
        // Through JSON, as `report merge` sees them.
        var merged = try BenchReport.read(Data(try first.json().utf8))
        try merged.merge(try BenchReport.read(Data(try second.json().utf8)))
        #expect(merged == whole)
        #expect(merged.histograms == whole.histograms)
        #expect(merged.timeline == whole.timeline)
        #expect(merged.devices == 400 && merged.attached == 400 - 31)
    }

    @Test func refusesToMergeDifferentRunsOrTheSameShardTwice() throws {
        let one = BenchReport(target: target, config: config, shards: [1])
        var copy = one
        #expect(throws: BenchReportError.self) { try copy.merge(one) }
        var other = config
        other.devices = 10
        var different = BenchReport(target: target, config: other, shards: [2])
        #expect(throws: BenchReportError.self) { try different.merge(one) }
    }

    @Test func countsDevicesHeldBackByTheClient() {
        var report = BenchReport(target: target, config: config, shards: [1])
        let schedule = ArrivalSchedule(devices: 400)
        for i in 0..<100 { report.add(device(i, schedule: schedule)) }
        #expect(report.clientDelayed.devices == 2)
    }

    @Test func schedulesArrivalsByTheRequestedModel() {
        let burst = ArrivalSchedule(devices: 100)
        #expect((0..<100).allSatisfy { burst.offset(of: $0) == .zero })
        let ramp = ArrivalSchedule(devices: 100, model: .ramp(.seconds(10)))
        #expect(ramp.offset(of: 0) == .zero && ramp.offset(of: 50) == .seconds(5) && ramp.offset(of: 99) < .seconds(10))
        let rate = ArrivalSchedule(devices: 100, model: .rate(20))
        #expect(rate.offset(of: 40) == .seconds(2))
        let jittered = ArrivalSchedule(devices: 1000, model: .burst, jitter: .seconds(1), seed: 3)
        let offsets = (0..<1000).map { jittered.offset(of: $0) }
        #expect(offsets.allSatisfy { $0 >= .zero && $0 < .seconds(1) })
        #expect(Set(offsets).count > 990, "jitter spreads arrivals")
        #expect(
            offsets == (0..<1000).map { ArrivalSchedule(devices: 1000, jitter: .seconds(1), seed: 3).offset(of: $0) })
    }

    @Test func shardsPartitionTheDevices() {
        let shards = (1...3).map { Array(ArrivalSchedule.indices(devices: 10, shard: $0, of: 3)) }
        #expect(shards == [[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]])
        #expect(Set(shards.flatMap { $0 }) == Set(0..<10))
    }

    @Test func rendersAnHTMLPageWithBothCharts() {
        var report = BenchReport(target: target, config: config, shards: [1])
        let schedule = ArrivalSchedule(devices: 400, model: .ramp(.seconds(4)))
        for i in 0..<200 { report.add(device(i, schedule: schedule)) }
        report.durationSeconds = 4
        report.finalize()
        let html = HTMLReport.render(report)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.components(separatedBy: "<svg").count == 3)
        #expect(html.contains("<polyline"))
        #expect(!html.contains("<script"), "self-contained, no script")
    }
}
