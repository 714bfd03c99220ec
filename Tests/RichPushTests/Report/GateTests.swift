import Foundation
import RichPush
import RichPushRuns
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The one CI decision: verdict mixes, content-extension outcomes, devices never run and thresholds,
/// to the decision, the JUnit file and the text, always agreeing.
@Suite struct GateTests {
    let target = BenchReport.Target(url: "https://cdn.example.com/hero.jpg", type: "jpg", payload: nil)
    let config = BenchReport.Config(
        devices: 2000, arrival: "burst", rampSeconds: nil, ratePerSecond: nil, jitterSeconds: 0, seed: 1,
        concurrency: 100, connections: "fresh", budgetSeconds: 30, shardCount: 1)

    func bench(attached: Int, failed: Int = 0, notRun: Int = 0, status: Int = 200, view: ContentOutcome.Kind? = nil)
        -> BenchReport
    {
        var report = BenchReport(target: target, config: config, shards: [1])
        for index in 0..<(attached + failed) {
            var device = DeviceResult(
                verdict: index < attached ? .attached : .fallback, reason: index < attached ? .ok : .httpStatus,
                status: index < attached ? 200 : status, bytes: 1, scheduled: .zero, started: .zero,
                ended: .milliseconds(10 + index % 50))
            device.contentExtension = index == 0 ? view : nil
            report.add(device)
        }
        report.notStarted = notRun
        report.finalize()
        return report
    }

    func summary(requested: Int, attached: Int, total: Int? = nil, views: [String: Int]? = nil) throws -> BatchSummary {
        let viewsJSON =
            views.map { views in
                ", \"content_extensions\": {" + views.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}"
            } ?? ""
        let json = """
            {"total": \(total ?? requested), "recorded": \(requested), "processed": \(requested), "skipped": 0,
             "interrupted": false, "verdicts": {"attached": \(attached), "fallback": \(requested - attached)},
             "reasons": {"ok": \(attached)}, "requested": \(requested), "attached": \(attached), "display_rate": 1,
             "download_ms": {}, "elapsed_seconds": 1\(viewsJSON)}
            """
        var summary = try BatchJSON.decoder.decode(BatchSummary.self, from: Data(json.utf8))
        summary.decide([])
        return summary
    }

    @Test func aBenchWhereNothingDisplaysFailsByDefault() {
        var report = bench(attached: 0, failed: 20)
        report.decide([])
        #expect(report.passed == false)
        #expect(GateDecision(report).failed.map(\.expression) == ["display>0%"])
        var fine = bench(attached: 19, failed: 1)
        fine.decide([])
        #expect(fine.passed == true && GateDecision(fine).status == .passed)
    }

    @Test func devicesNeverRunCountAsNotShown() {
        // A time limit: 400 of 2,000 devices ran, all attached.
        var report = bench(attached: 400, notRun: 1600)
        report.decide([Threshold(.display, .greaterOrEqual, 99)])
        let decision = GateDecision(report)
        #expect(!decision.passed)
        #expect(decision.results[0].actual == 20)
        #expect(
            decision.lines.first
                == "Not run: 1600 devices of 2000 (a time limit or an interruption); they count as not shown.")
        #expect(Gate.measure(.notRun, in: report) == 1600)
        // Among the devices that ran, none failed.
        #expect(Gate.measure(.errors, in: report) == 0)
    }

    @Test func measuresStatusSharesAndLatency() throws {
        let report = bench(attached: 90, failed: 10, status: 503)
        #expect(Gate.measure(.http5xx, in: report) == 10)
        #expect(Gate.measure(.http4xx, in: report) == 0)
        #expect(Gate.measure(.errors, in: report) == 10)
        #expect(Gate.measure(.reason(.httpStatus), in: report) == 10)
        let p99 = Gate.measure(.latency(percentile: 99), in: report)
        #expect(p99 >= 58 && p99 <= 60, "\(p99)")
        var checked = report
        checked.decide([
            try Threshold(parsing: "http_5xx<1%", for: .bench), try Threshold(parsing: "p95<800ms", for: .bench),
        ])
        #expect(checked.thresholds.map(\.passed) == [false, true, true, true, true])
        #expect(checked.thresholds[0].message == "http_5xx 10.0% fails the threshold http_5xx<1% by 9 points")
    }

    @Test func aWouldCrashPayloadFailsABatchThatOtherwiseAttaches() throws {
        // 300 payloads, all attach; 63 would crash their content extension.
        let batch = try summary(requested: 300, attached: 300, views: ["shows": 237, "would-crash": 63])
        let decision = GateDecision(batch)
        #expect(!decision.passed && decision.wouldCrash == 63)
        #expect(decision.failed.map(\.expression) == ["would_crash==0"])
        #expect(decision.lines.contains { $0.contains("63 payloads would crash the content extension") })
        // The stderr text names the count and the failed threshold.
        let text = batch.text(folder: "out")
        #expect(
            text.contains("63 would-crash") && text.contains("FAIL would_crash 63 fails the threshold would_crash==0"))
        #expect(text.contains("Gate: FAIL (1 of 3 thresholds failed)."))
        // Relaxing that threshold keeps the others.
        var relaxed = batch
        relaxed.decide([Threshold(.wouldCrash, .lessOrEqual, 63)])
        #expect(GateDecision(relaxed).passed)
        #expect(
            relaxed.thresholds?.map(\.expression) == ["would_crash<=63", "display>=100%", "configuration_error==0"])
    }

    @Test func aMergedSummaryNamesNoResultsFile() throws {
        let text = try summary(requested: 2, attached: 2).text(folder: nil)
        #expect(!text.contains("results.ndjson") && text.contains("Gate: PASS (3 thresholds met)."))
    }

    @Test func anInterruptedBatchCountsWhatItNeverRan() throws {
        let batch = try summary(requested: 100, attached: 100, total: 400)
        #expect(batch.notRun == 300)
        #expect(Gate.measure(.display, in: batch) == 25)
        #expect(!GateDecision(batch).passed)
    }

    /// k6's `rate<0.01` reads a batch too: the share of payloads asking for an attachment that would not
    /// show it, what never ran included.
    @Test func aBatchsErrorRateIsWhatDisplayLeavesOut() throws {
        let batch = try summary(requested: 100, attached: 97, total: 104)
        #expect(abs(Gate.measure(.errors, in: batch) - (100 - Gate.measure(.display, in: batch))) < 1e-9)
        #expect(abs(Gate.measure(.errors, in: batch) - 7 / 104 * 100) < 1e-9)
        let k6 = try Threshold(parsing: "rate<0.01", for: .batch)
        #expect(!ThresholdResult(k6, actual: Gate.measure(k6.metric, in: batch)).passed)
        let none = try summary(requested: 0, attached: 0)
        #expect(Gate.measure(.errors, in: none) == 0)
    }

    @Test func runningOutOfDescriptorsIsTheClientsLimit() throws {
        var batch = try summary(requested: 10, attached: 9)
        batch.reasons[ReasonCode.tooManyOpenFiles.rawValue] = 1
        #expect(GateDecision(batch).status == .clientLimited)
    }

    /// The JUnit file fails exactly when the gate does: one case per threshold after the payloads.
    @Test(arguments: [
        (300, 300, ["would-crash": 1], false), (300, 300, ["shows": 300], true), (10, 9, ["shows": 10], false),
        (0, 0, [:], true),
    ])
    func junitAgreesWithTheGate(_ requested: Int, _ attached: Int, _ views: [String: Int], _ passes: Bool) throws {
        let batch = try summary(requested: requested, attached: attached, views: views.isEmpty ? nil : views)
        let decision = GateDecision(batch)
        #expect(decision.passed == passes)
        var junit = JUnitReport()
        junit.add(gate: batch.thresholds ?? [])
        let xml = junit.xml
        let gateFailures = xml.components(separatedBy: "<failure type=\"threshold/").count - 1
        #expect(gateFailures == decision.failed.count)
        #expect((gateFailures == 0) == passes)
        #expect(xml.contains(#"classname="richpush.gate" name="display&gt;=100%""#))
        _ = try XMLDocument(xmlString: xml)
    }
}
