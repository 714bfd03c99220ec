import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// Small bursts against the in-process server.
@Suite struct BurstRunnerTests {
    let rig: LocalRig
    var server: AssetServer { rig.server }
    var engine: FetchEngine { rig.engine }
    var folder: String { rig.folder }

    init() throws { rig = try LocalRig() }

    func cleanUp() { rig.cleanUp() }

    func run(url: String, devices: Int, model: ArrivalSchedule.Model = .burst, budget: Duration = .seconds(10))
        async throws -> BenchReport
    {
        let service = ServiceExtension(
            engine: engine, store: try AttachmentStore(folder: folder),
            policy: Fixtures.extensionPolicy(mapping: server, budget: budget))
        let payload = #"{"aps":{"alert":"b","mutable-content":1},"ab":{"att":{"url":"\#(url)","type":"jpg"}}}"#
        let schedule = ArrivalSchedule(devices: devices, model: model)
        var report = BenchReport(
            target: .init(url: url, type: "jpg", payload: nil),
            config: .init(
                devices: devices, arrival: "burst", rampSeconds: nil, ratePerSecond: nil, jitterSeconds: 0, seed: 1,
                concurrency: devices, connections: "fresh", budgetSeconds: budget.inSeconds, shardCount: 1),
            shards: [1])
        await BurstRunner(
            service: service, payload: Array(payload.utf8), schedule: schedule, indices: Array(0..<devices),
            concurrency: devices, timeLimit: .seconds(60)
        ).run(into: &report)
        return report
    }

    @Test func countsStalledResponsesAsExpired() async throws {
        defer { cleanUp() }
        let report = try await run(
            // The budget is what the stalled quarter waits out; it is long enough that the other devices
            // finish well inside it even when the whole suite starts at once on two cores.
            url: "https://cdn.example.com/hero.jpg?stall=100&every=4", devices: 40, budget: .seconds(20))
        #expect(report.devices == 40)
        #expect(report.verdicts["expired"] == 10, "\(report.verdicts) \(report.reasons)")
        #expect(report.verdicts["attached"] == 30)
        #expect(report.displayRate == 0.75)
        #expect(report.histograms["end_to_end"]?.count == 40)
        #expect(
            Fixtures.files(in: folder).filter { !$0.hasPrefix(".richpush-") }.count <= 1,
            "one stored file for identical content")
    }

    @Test func followsTheArrivalSchedule() async throws {
        defer { cleanUp() }
        let started = ContinuousClock.now
        let report = try await run(url: "https://cdn.example.com/hero.jpg", devices: 12, model: .ramp(.seconds(2)))
        #expect(ContinuousClock.now - started >= .milliseconds(1800), "the last device arrives after 11/12 of 2 s")
        #expect(report.timeline.first?.arrivals == 6 && report.timeline.dropFirst().first?.arrivals == 6)
        #expect(report.attached == 12)
        #expect(report.clientDelayed.devices == 0)
    }

    @Test func writesAReportThatMatchesItsSchema() async throws {
        defer { cleanUp() }
        let report = try await run(url: "https://cdn.example.com/hero.jpg?every=3&status=503", devices: 30)
        #expect(report.reasons["http-status"] == 10)
        let json = try JSONSerialization.jsonObject(with: Data(try report.json().utf8))
        let schema = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: Fixtures.root + "/bench/report.schema.json")))
        let problems = JSONSchemaCheck.violations(of: json, against: try #require(schema as? [String: Any]))
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }
}
