import AssetServer
import Foundation
import RichPush
import RichPushRuns
import Synchronization
import TestSupport
import Testing

/// Small bursts against the in-process server.
@Suite struct BurstRunnerTests {
    let rig: LocalRig
    var server: AssetServer { rig.server }
    var engine: FetchEngine { rig.engine }
    var folder: String { rig.folder }

    init() throws {
        // Messages spell settings as the command line does, as users read them.
        useCommandLineSpelling()
        rig = try LocalRig()
    }

    func cleanUp() { rig.cleanUp() }

    func run(
        // The default budget is one the suite's start-up load (every suite starting at once on two
        // cores) cannot exhaust: tests about expiry pass their own. Each device gets the budget as
        // given (the default is already stretched with the machine's load).
        url: String, devices: Int, model: ArrivalSchedule.Model = .burst,
        budget: Duration = TimeScale.scaled(.seconds(60)), concurrency: Int? = nil, mix: NetworkMix? = nil,
        progress: @escaping @Sendable (BurstRunner.Progress) -> Void = { _ in }
    ) async throws -> BenchReport {
        var policy = Fixtures.extensionPolicy(mapping: server, budget: budget)
        policy.budget = budget
        let service = ServiceExtension(engine: engine, store: try AttachmentStore(folder: folder), policy: policy)
        let payload = #"{"aps":{"alert":"b","mutable-content":1},"ab":{"att":{"url":"\#(url)","type":"jpg"}}}"#
        let schedule = ArrivalSchedule(devices: devices, model: model)
        var report = BenchReport(
            target: .init(url: url, type: "jpg", payload: nil),
            config: .init(
                devices: devices, arrival: "burst", rampSeconds: nil, ratePerSecond: nil, jitterSeconds: 0, seed: 1,
                concurrency: concurrency ?? devices, connections: "fresh", budgetSeconds: budget.inSeconds,
                shardCount: 1),
            shards: [1])
        var runner = BurstRunner(
            service: service, payload: Array(payload.utf8), schedule: schedule, indices: Array(0..<devices),
            concurrency: concurrency ?? devices, timeLimit: TimeScale.scaled(.seconds(60)))
        if let mix { runner.networks = NetworkAssignment(mix: mix, devices: devices, seed: 7, service: service) }
        await runner.run(into: &report, progress: progress)
        return report
    }

    /// Every device arrives at once and downloads for 2.5 s: the seconds after the last arrival still
    /// have devices in flight, and their peak says so (it was 0 once nothing started any more).
    @Test func thePeakInFlightIsRightAfterTheLastArrival() async throws {
        defer { cleanUp() }
        let report = try await run(url: "https://cdn.example.com/hero.jpg?delay=2500", devices: 8)
        #expect(report.attached == 8)
        #expect(report.timeline.count >= 3, "\(report.timeline.map(\.inFlight))")
        for second in report.timeline where second.inFlight > 0 {
            #expect(second.peakInFlight > 0, "second \(second.second): \(second.inFlight) in flight, peak 0")
            #expect(second.peakInFlight <= second.inFlight, "second \(second.second)")
        }
    }

    @Test func breaksTheDisplayRateDownPerNetworkAndTheRowsAddUpToTheTotals() async throws {
        defer { cleanUp() }
        // 1.5 MB: about 50 s at Edge's 240 kbit/s, well under a second on Wi-Fi. A 40 s budget stays
        // under Edge's 50 s, which load only makes longer, and leaves Wi-Fi room however busy the machine
        // becomes after the suite measured its load (CI once saw 15 Wi-Fi devices take 16 s, shaped
        // through the relay on a machine busy with builds: a budget scaled from the start's load was not
        // enough).
        let mix = try NetworkMix(parsing: "edge=25,wifi=75")
        let report = try await run(
            url: "https://cdn.example.com/hero.jpg?size=1500000", devices: 20, budget: .seconds(40), mix: mix)
        let networks = try #require(report.networks)
        #expect(Set(networks.keys) == ["edge", "wifi"])
        #expect(networks["edge"]?.devices == 5)
        #expect(networks["wifi"]?.devices == 15)
        #expect(networks["edge"]?.attached == 0)
        #expect(networks["edge"]?.verdicts["expired"] == 5)
        #expect(networks["wifi"]?.attached == 15)
        #expect(networks["wifi"]?.displayRate == 1)
        #expect(networks.values.reduce(0) { $0 + $1.devices } == report.devices)
        #expect(networks.values.reduce(0) { $0 + $1.attached } == report.attached)
        #expect(networks.values.reduce(0) { $0 + $1.latency.count } == report.histograms["end_to_end"]?.count)
        #expect((networks["edge"]?.latencyMilliseconds["p50"] ?? 0) >= 3000)
        #expect(report.networkRows.map(\.title) == ["Edge", "Wi-Fi"])
        let text = BenchSummary.text(report)
        #expect(text.contains("Wi-Fi"), "\(text)")
        #expect(text.contains("100.0%"))
        let html = HTMLReport.render(report)
        #expect(html.contains("By network"))
        #expect(html.contains("<td class=\"text\">Edge</td><td>5</td><td>0</td>"))
        // The JSON keeps the rows, matches the schema, and merges back to the same rows.
        let json = try report.json()
        #expect(json.contains("\"networks\""))
        let schema = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: Fixtures.root + "/bench/report.schema.json")))
        let problems = JSONSchemaCheck.violations(
            of: try JSONSerialization.jsonObject(with: Data(json.utf8)), against: try #require(schema as? [String: Any])
        )
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        let read = try BenchReport.read(Data(json.utf8))
        #expect(read.networks?["edge"]?.devices == 5)
        #expect(read.networks?["wifi"]?.latency == networks["wifi"]?.latency)
    }

    @Test func countsStalledResponsesAsExpired() async throws {
        defer { cleanUp() }
        let report = try await run(
            // The budget is what the stalled quarter waits out; it is long enough that the other devices
            // finish well inside it even when the whole suite starts at once on two cores.
            url: "https://cdn.example.com/hero.jpg?stall=100&every=4", devices: 40,
            budget: TimeScale.scaled(.seconds(20)))
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
        // The default budget, which the suite's start-up load cannot exhaust: this test is about the schedule.
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
        #expect(report.statusCodes == ["200": 20, "503": 10])
        #expect(report.statusClasses == ["2xx": 20, "3xx": 0, "4xx": 0, "5xx": 10, "no_response": 0])
        #expect(report.samples["http-status"]?.contains("503") == true, "\(report.samples)")
        #expect(report.samples["ok"] != nil)
        let json = try JSONSerialization.jsonObject(with: Data(try report.json().utf8))
        let schema = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: Fixtures.root + "/bench/report.schema.json")))
        let problems = JSONSchemaCheck.violations(of: json, against: try #require(schema as? [String: Any]))
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    /// Every progress snapshot a run hands out, in the order the observer saw them.
    final class ProgressLog: Sendable {
        let seen = Mutex<[BurstRunner.Progress]>([])
        func record(_ progress: BurstRunner.Progress) { seen.withLock { $0.append(progress) } }
        var all: [BurstRunner.Progress] { seen.withLock { $0 } }
    }

    @Test func progressIsMonotonicAndInFlightNeverPassesTheCap() async throws {
        defer { cleanUp() }
        let log = ProgressLog()
        // The budget counts from each device's arrival, and all 30 arrive at once behind a cap of 4: a
        // generous budget, so a busy machine (the suite's other tests) never expires the last ones.
        let report = try await run(
            url: "https://cdn.example.com/hero.jpg?delay=100", devices: 30, concurrency: 4,
            progress: { log.record($0) })
        let seen = log.all
        #expect(report.devices == 30 && report.attached == 30)
        #expect(!seen.isEmpty)
        let maxSeen = seen.map(\.inFlight).max() ?? 0
        #expect(maxSeen <= 4, "in flight at most --concurrency; seen \(maxSeen)")
        #expect(seen.allSatisfy { $0.maxInFlight <= 4 && $0.inFlight >= 0 })
        #expect(seen.last?.maxInFlight == 4, "a burst of 30 fills the 4 slots")
        for (earlier, later) in zip(seen, seen.dropFirst()) {
            #expect(later.done >= earlier.done && later.started >= earlier.started, "progress never goes back")
        }
        #expect(seen.last?.done == 30 && seen.last?.inFlight == 0)
        #expect(report.clientDelayed.devices > 0, "the cap held devices back, and the report says so")
        #expect(report.timeline.map(\.peakInFlight).max() == 4, "\(report.timeline.map(\.peakInFlight))")
    }

    @Test func reportsProgressDuringARampNotOnlyAtTheEnd() async throws {
        defer { cleanUp() }
        let log = ProgressLog()
        let report = try await run(
            url: "https://cdn.example.com/hero.jpg", devices: 12, model: .ramp(.seconds(2)),
            progress: { log.record($0) })
        #expect(report.attached == 12)
        // Devices finish one by one along the ramp; each is counted as it finishes.
        let midway = log.all.filter { $0.done > 0 && $0.done < 12 }
        #expect(midway.count >= 3, "\(log.all.map(\.done))")
        #expect(midway.allSatisfy { $0.inFlight < 12 }, "in flight reflects the devices really running")
    }

    @Test func measuresTheClientsOwnLoad() async throws {
        defer { cleanUp() }
        let report = try await run(url: "https://cdn.example.com/hero.jpg", devices: 20)
        #expect(report.client.coreSeconds > 0)
        #expect(report.client.userCpuSeconds + report.client.systemCpuSeconds > 0)
        #expect(report.client.cpuShare > 0 && report.client.cpuShare <= 1.1)
        #expect(report.client.schedulingLag.count == 20)
        #expect(report.client.schedulingLagMilliseconds["max"] != nil)
    }
}
