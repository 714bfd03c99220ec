import Foundation
import RichPush
import RichPushRuns
import Testing

/// The HTML report's charts: round ticks fitted to the data, and every series drawn.
@Suite struct HTMLReportTests {
    /// Whether `value` is 1, 2 or 5 times a power of ten.
    func isRoundStep(_ value: Double) -> Bool {
        let mantissa = value / pow(10, floor(log10(value)))
        return [1.0, 2, 5].contains { abs(mantissa - $0) < 1e-9 }
    }

    @Test(arguments: [0.3, 1, 7, 62.5, 99, 100, 101, 125, 333, 1234.5, 0.0042, 87_654])
    func fitsTheAxisToTheDataWithRoundTicks(maximum: Double) {
        let axis = ChartAxis.fitted(to: maximum)
        #expect(isRoundStep(axis.step), "step \(axis.step)")
        #expect(axis.top >= maximum && axis.top - axis.step < maximum, "fitted: \(axis.top) for \(maximum)")
        #expect((6...8).contains(axis.ticks.count), "\(axis.ticks)")
        #expect(axis.ticks.allSatisfy { abs(($0 / axis.step).rounded() - $0 / axis.step) < 1e-9 })
    }

    @Test func neverLabelsATickWithAFractionOfARoundStep() {
        // A merged report's counts (two shards of 125 devices each): the old axis drew 62.5.
        let axis = ChartAxis.fitted(to: 250, integer: true)
        let labels = axis.ticks.map(axis.label)
        #expect(labels == ["0", "50", "100", "150", "200", "250"])
        let small = ChartAxis.fitted(to: 3, integer: true)
        #expect(small.step == 1 && small.ticks.map(small.label) == ["0", "1", "2", "3"])
        let fraction = ChartAxis.fitted(to: 0.7)
        #expect(fraction.ticks.map(fraction.label) == ["0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7"])
        let latency = ChartAxis.fitted(to: 1003)
        #expect(latency.step == 200 && latency.top == 1200, "close to the data, not 1500")
    }

    @Test func drawsEverySeriesAndTheClientWarning() {
        var report = BenchReport(
            target: .init(url: "https://cdn.example.com/hero.jpg", type: "jpg", payload: nil),
            config: .init(
                devices: 40, arrival: "burst", rampSeconds: nil, ratePerSecond: nil, jitterSeconds: 0, seed: 1,
                concurrency: 10, connections: "fresh", budgetSeconds: 30, shardCount: 1),
            shards: [1])
        for i in 0..<40 {
            // Every device ends with the same latency: p50, p90 and p99 coincide.
            report.add(
                DeviceResult(
                    verdict: .attached, reason: .ok, status: 200, bytes: 1, scheduled: .seconds(Double(i) / 10),
                    started: .seconds(Double(i) / 10), ended: .seconds(Double(i) / 10) + .milliseconds(40)))
            report.notePeakInFlight(10, at: .seconds(Double(i) / 10))
        }
        report.client.measure(user: 3.9, system: 0, wall: .seconds(2), cores: 2)
        report.durationSeconds = 4
        report.finalize()
        let html = HTMLReport.render(report)
        // The three percentile lines are all drawn, widest underneath, and distinguishable in the legend.
        let widths = ["6.0", "3.5", "1.5"].map { html.contains("stroke-width=\"\($0)\" stroke-opacity") }
        #expect(widths == [true, true, true])
        #expect(html.contains(">arrivals<") && html.contains("stroke-dasharray=\"6 3\""))
        #expect(html.contains("Most devices in flight at once"))
        #expect(html.contains("not the CDN&#39;s latency") || html.contains("not the CDN's latency"))
        // The gate's thresholds, each PASS or FAIL with its measured value, and the verdict.
        report.decide([Threshold(.latency(percentile: 95), .less, 10)])
        let gated = HTMLReport.render(report)
        #expect(gated.contains("Gate: <span class=\"fail\">FAIL</span>"), "\(gated.suffix(2000))")
        #expect(gated.contains("p95 end-to-end 40"))
        #expect(gated.contains("PASS</span> display 100.0% meets the threshold display&gt;0%"))
    }

    /// Charts scale to a narrow window (a viewBox, at most the page's width), and a --urls run's
    /// header names its list, not only the first entry.
    @Test func chartsScaleAndTheHeaderNamesTheList() throws {
        var report = BenchReport(
            target: .init(url: "https://cdn.example.com/hero.jpg", type: "jpg", payload: nil),
            config: .init(
                devices: 2, arrival: "burst", rampSeconds: nil, ratePerSecond: nil, jitterSeconds: 0, seed: 1,
                concurrency: 2, connections: "fresh", budgetSeconds: 30, shardCount: 1),
            shards: [1])
        let list = try URLList(
            parsing: "https://cdn.example.com/hero.jpg\nhttps://cdn.example.com/hero.png\n", file: "urls.txt")
        report.urls = URLBreakdown(list)
        report.add(
            DeviceResult(
                verdict: .attached, reason: .ok, status: 200, bytes: 1, scheduled: .zero, started: .zero,
                ended: .milliseconds(40)))
        report.finalize()
        let html = HTMLReport.render(report)
        #expect(html.contains("urls.txt (2 URLs, first https://cdn.example.com/hero.jpg)"))
        #expect(
            html.contains("viewBox=\"0 0 ") && html.contains("svg { background: #fff; max-width: 100%; height: auto; }")
        )
        #expect(html.contains("<meta name=\"viewport\""))
    }
}
