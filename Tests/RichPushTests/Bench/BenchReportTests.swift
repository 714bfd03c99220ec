import Foundation
import RichPush
import RichPushRuns
import TestSupport
import Testing

/// The report: device accounting, the arrival models, and merging shards.
@Suite struct BenchReportTests {
    /// Messages spell settings as the command line does, as users read them.
    init() { useCommandLineSpelling() }

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

    @Test func rendersAnHTMLPageWithEveryChart() {
        var report = BenchReport(target: target, config: config, shards: [1])
        let schedule = ArrivalSchedule(devices: 400, model: .ramp(.seconds(4)))
        for i in 0..<200 { report.add(device(i, schedule: schedule)) }
        report.durationSeconds = 4
        report.finalize()
        let html = HTMLReport.render(report)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        // Latency, throughput, in flight, distribution; then the burst timeline's in flight, new
        // connections, bytes and cache results (no hit-ratio chart: no response had a cache header).
        #expect(html.components(separatedBy: "<svg").count == 9)
        #expect(html.contains("Burst timeline") && html.contains("No response carried a cache header"))
        #expect(html.contains("<polyline") && html.contains("Latency distribution"))
        #expect(!html.contains("<script") && !html.contains("http://www.w3.org/1999/xlink"), "self-contained")
        #expect(!html.contains("src=") && !html.contains("href="), "no external resource")
    }

    @Test func leavesFailedDevicesOutOfThePhasesTheyNeverReached() {
        var report = BenchReport(target: target, config: config, shards: [1])
        // Refused: a name lookup, then nothing.
        report.add(
            DeviceResult(
                verdict: .fallback, reason: .connectFailed, message: "connection refused", bytes: 0,
                dns: .milliseconds(3), connect: .zero, tls: .zero, firstByte: .zero, download: .zero, scheduled: .zero,
                started: .zero, ended: .milliseconds(5)))
        // Refused before any transfer (no timings at all).
        report.add(
            DeviceResult(
                verdict: .fallback, reason: .atsBlocked, bytes: 0, scheduled: .zero, started: .zero,
                ended: .milliseconds(1)))
        report.add(
            DeviceResult(
                verdict: .attached, reason: .ok, status: 200, bytes: 10, dns: .milliseconds(2),
                connect: .milliseconds(4), tls: .milliseconds(9), firstByte: .milliseconds(20),
                download: .milliseconds(25), scheduled: .zero, started: .zero, ended: .milliseconds(26)))
        report.finalize()
        #expect(report.histograms["dns"]?.count == 2)
        #expect(report.histograms["connect"]?.count == 1, "the refused device is not a 0 ms connect")
        #expect(report.percentilesMilliseconds["connect"]?["min"] == 4)
        #expect(report.notReached == ["dns": 1, "connect": 2, "tls": 2, "first_byte": 2, "download": 2])
        #expect(report.histograms["end_to_end"]?.count == 3)
        #expect(report.statusClasses["no_response"] == 2 && report.statusClasses["2xx"] == 1)
        #expect(report.samples == ["connect-failed": "connection refused"])
        let text = BenchSummary.text(report)
        #expect(text.contains("NOT REACHED") && text.contains("connection refused"))
    }

    @Test func computesTheStatisticsLoadTestersReadFirst() throws {
        var report = BenchReport(target: target, config: config, shards: [1])
        for ms in 1...1000 {
            report.add(
                DeviceResult(
                    verdict: .attached, reason: .ok, status: 200, bytes: 1, scheduled: .zero, started: .zero,
                    ended: .milliseconds(Int64(ms))))
        }
        report.durationSeconds = 2
        report.finalize()
        let stats = try #require(report.percentilesMilliseconds["end_to_end"])
        #expect(stats["min"] == 1 && stats["max"] == 1000)
        #expect(stats["mean"] == 500.5)
        // The population standard deviation of 1...1000 is 288.675; the buckets are within 0.1 %.
        #expect(abs((stats["stdev"] ?? 0) - 288.675) < 0.3)
        #expect(abs((stats["p95"] ?? 0) - 950) <= 1)
        #expect(abs((stats["p50"] ?? 0) - 500) <= 0.5)
        let text = BenchSummary.text(report)
        for column in ["MIN", "MEAN", "STDEV", "P95", "2xx"] { #expect(text.contains(column)) }
    }

    @Test func writesReadableBucketsThatReadBackExactly() throws {
        var histogram = LatencyHistogram()
        for value: UInt64 in [5, 5, 2047, 2048, 123_456, 30_000_000] { histogram.record(microseconds: value) }
        let json = try BatchJSON.pretty(histogram)
        #expect(json.contains("\"le_ms\" : 0.005") && json.contains("\"count\" : 2"), "\(json)")
        #expect(!json.contains("counts"))
        let back = try BatchJSON.decoder.decode(LatencyHistogram.self, from: Data(json.utf8))
        #expect(back == histogram)
        #expect(back.min == 5)
        let bad = #"{"buckets":[{"le_ms":0.0055,"count":1}],"count":1,"min":5,"max":5,"sum":5}"#
        #expect(throws: DecodingError.self) {
            try BatchJSON.decoder.decode(LatencyHistogram.self, from: Data(bad.utf8))
        }
    }

    @Test func asksToRerunReportsOfTheOldFormat() throws {
        let old = #"{"schema":"richpush.bench/1","devices":3}"#
        let error = try #require(throws: BenchReportError.self) { try BenchReport.read(Data(old.utf8)) }
        #expect(error.message.contains("re-run"))
        let readme = try #require(throws: BenchReportError.self) { try BenchReport.read(Data("# README".utf8)) }
        #expect(readme.message.contains("not a richpush bench report"))
        #expect(!readme.message.contains("DecodingError"))
    }

    @Test func saysWhichThresholdFailedAndByHowMuch() {
        var report = BenchReport(target: target, config: config, shards: [1])
        for i in 0..<4 {
            report.add(
                DeviceResult(
                    verdict: i == 0 ? .fallback : .attached, reason: i == 0 ? .httpStatus : .ok, bytes: 1,
                    scheduled: .zero, started: .zero, ended: .microseconds(1500)))
        }
        report.finalize()
        let failing = [Threshold(.display, .greaterOrEqual, 90), Threshold(.latency(percentile: 99), .lessOrEqual, 1)]
        let results = Gate.results(for: report, thresholds: failing)
        #expect(results.map(\.passed) == [false, false, true, true])
        #expect(results[0].message == "display 75.0% fails the threshold display>=90% by 15 points")
        #expect(results[1].message == "p99 end-to-end 1.5 ms fails the threshold p99<=1ms by 0.5 ms")
        #expect(results[0].name == "display_rate" && results[1].name == "p99_end_to_end")
        let passing = [Threshold(.display, .greaterOrEqual, 75), Threshold(.latency(percentile: 99), .lessOrEqual, 2)]
        #expect(Gate.results(for: report, thresholds: passing).allSatisfy { $0.passed })
        // No threshold given: the defaults (something displays, no content extension fails).
        #expect(
            Gate.results(for: report, thresholds: []).map(\.expression) == [
                "display>0%", "would_crash==0", "configuration_error==0",
            ])
    }

    @Test func saysWhenTheClientIsTheBottleneck() throws {
        var calm = ClientLoad()
        calm.measure(user: 0.5, system: 0.2, wall: .seconds(2), cores: 2)
        for _ in 0..<100 { calm.schedulingLag.record(.milliseconds(2)) }
        calm.finalize(tooManyOpenFiles: 0)
        #expect(!calm.bound && calm.warning == nil)
        #expect(abs(calm.cpuShare - 0.175) < 1e-9)

        var busy = calm
        busy.measure(user: 3.0, system: 0.8, wall: .seconds(2), cores: 2)
        busy.finalize(tooManyOpenFiles: 0)
        #expect(busy.bound)
        #expect(busy.warning?.contains("not the CDN's latency") == true)

        var late = calm
        for _ in 0..<10 { late.schedulingLag.record(.milliseconds(300)) }
        late.finalize(tooManyOpenFiles: 0)
        #expect(late.bound && late.boundReasons.count == 1 && late.boundReasons[0].contains("late"))

        var starved = calm
        starved.finalize(tooManyOpenFiles: 3)
        #expect(
            starved.bound && starved.boundReasons == ["3 devices failed because richpush ran out of file descriptors"])

        var merged = calm
        try merged.merge(busy)
        merged.finalize(tooManyOpenFiles: 0)
        #expect(merged.bound, "the busiest shard decides")
    }
}
