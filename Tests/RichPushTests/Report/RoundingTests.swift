import Foundation
import RichPush
import RichPushRuns
import Testing

/// Floats in reports rounded to what they mean, and the histograms' unit-named keys.
@Suite struct RoundingTests {
    @Test func roundsToWhatANumberMeans() {
        #expect(Rounding.milliseconds(12.345_678) == 12.35)
        #expect(Rounding.seconds(0.569_072_999_999_999_9) == 0.569)
        #expect(Rounding.perSecond(4.285_714) == 4.3)
        #expect(Rounding.share(2.0 / 3.0) == 0.667)
        #expect(Rounding.milliseconds(.nan) == 0 && Rounding.milliseconds(.infinity) == 0)
    }

    @Test func aBenchReportsDerivedNumbersAreRounded() throws {
        let config = BenchReport.Config(
            devices: 3, arrival: "burst", rampSeconds: nil, ratePerSecond: nil, jitterSeconds: 0, seed: 1,
            concurrency: 3, connections: "fresh", budgetSeconds: 30, shardCount: 1)
        var report = BenchReport(
            target: .init(url: "https://x/a.jpg", type: "jpg", payload: nil), config: config, shards: [1])
        for (index, micros) in [1_234_567, 2_345_678, 3_456_789].enumerated() {
            report.add(
                DeviceResult(
                    verdict: index == 0 ? .fallback : .attached, reason: index == 0 ? .httpStatus : .ok,
                    bytes: 1_234_567,
                    scheduled: .zero, started: .zero, ended: .microseconds(micros)))
        }
        report.durationSeconds = 0.700_000_000_1
        report.finalize()
        #expect(report.displayRate == 0.667)
        #expect(report.devicesPerSecond == 4.3)
        #expect(report.megabytesPerSecond == 5.3)
        let mean = try #require(report.percentilesMilliseconds["end_to_end"]?["mean"])
        #expect(mean == 2345.68, "\(mean)")
        let json = try report.json()
        // Unit-named histogram keys beside the old ones, with the same microseconds.
        #expect(json.contains("\"max_us\" : 3456789") && json.contains("\"max\" : 3456789"), "\(json.prefix(400))")
        let again = try BenchReport.read(Data(json.utf8))
        #expect(again == report)
    }

    @Test func aHistogramReadsEitherKey() throws {
        let old = #"{"buckets": [{"le_ms": 0.5, "count": 1}], "count": 1, "max": 500, "min": 500, "sum": 500}"#
        let named =
            #"{"buckets": [{"le_ms": 0.5, "count": 1}], "count": 1, "max_us": 500, "min_us": 500, "sum_us": 500}"#
        let first = try BatchJSON.decoder.decode(LatencyHistogram.self, from: Data(old.utf8))
        let second = try BatchJSON.decoder.decode(LatencyHistogram.self, from: Data(named.utf8))
        #expect(first == second && first.max == 500)
    }
}
