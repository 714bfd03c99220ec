import Foundation
import RichPush
import RichPushRuns
import TestSupport
import Testing

/// A campaign-shaped bench through the binary: URL lists and templates against the emulated edge
/// (`--serve --edge`), the cache hit ratio and the split latency, the per-device log, and redirects
/// kept on this machine.
@Suite(.serialized) struct CampaignBenchTests {
    /// 40 devices over a list of 4 URLs, arriving over 4 s: each URL's first request misses and fills
    /// (400 ms), every later one is a hit (those that come during the fill wait for it, as a CDN
    /// collapses them). 4 misses and 36 hits, whatever the timing.
    @Test func aListAgainstTheEdgeGivesTheHitRatioAndTheSplitLatency() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let list = folder + "/urls.txt"
        try """
        # four variants of the hero, the first twice as often
        hero.jpg?v=a 2
        hero.jpg?v=b
        hero.jpg?v=c
        hero.jpg?v=d
        """.write(toFile: list, atomically: true, encoding: .utf8)
        let run = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "--edge", "--edge-fill", "400", "--urls", list, "--devices", "40",
                "--ramp", "4", "--no-progress", "--no-preflight", "--json", folder + "/report.json",
                "--log", folder + "/devices.csv", "--html", folder + "/report.html",
            ], directory: Fixtures.root)
        #expect(run.status == 0, "\(run.stderr)")
        let report = try BenchReport.read(try Data(contentsOf: URL(fileURLWithPath: folder + "/report.json")))
        let cache = try #require(report.cache)
        #expect(cache.misses == 4 && cache.hits == 36, "\(cache.results)")
        #expect(cache.hitRatio == 0.9)
        // A miss waits for the fill: no miss is faster than it, and hits are not held by it.
        #expect(cache.missLatency.min >= 400_000)
        #expect((cache.hitLatencyMilliseconds["p50"] ?? .infinity) < (cache.missLatencyMilliseconds["p50"] ?? 0))
        let rows = try #require(report.urls?.rows)
        #expect(rows.count == 4)
        #expect((15...17).contains(rows["https://cdn.example.com/hero.jpg?v=a"]?.devices ?? 0))
        #expect(rows.values.allSatisfy { $0.misses == 1 && $0.attached == $0.devices })
        #expect(report.httpVersions == ["1.1": 40], "\(report.httpVersions ?? [:])")
        #expect(run.stdout.contains("Cache: 90.0% hit ratio (36 hits, 4 misses"), "\(run.stdout)")
        #expect(run.stdout.contains("https://cdn.example.com/hero.jpg?v=a"))
        #expect(run.stdout.contains("HTTP versions: HTTP/1.1 40."), "\(run.stdout)")
        let log = try String(contentsOfFile: folder + "/devices.csv", encoding: .utf8)
        let lines = log.split(separator: "\n")
        #expect(lines.count == 41 && lines[0].hasPrefix("device,url,network,scheduled_ms"))
        #expect(lines.filter { $0.contains(",miss,") }.count == 4)
        #expect(lines.filter { $0.contains(",hit,") }.count == 36)
        let html = try String(contentsOfFile: folder + "/report.html", encoding: .utf8)
        #expect(html.contains("Burst timeline") && html.contains("hit ratio") && html.contains("By URL"))
        let problems = JSONSchemaCheck.violations(
            of: try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/report.json"))),
            against: try BenchCommandTests.schema())
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    /// A cache-busting template: every device its own URL, so every one misses.
    @Test func aTemplateBustsTheCacheAndTheLogNamesEachURL() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "--edge", "--edge-fill", "1", "--url", "hero.jpg?v={device}",
                "--devices", "12", "--no-progress", "--json", folder + "/report.json", "--log",
                folder + "/devices.ndjson",
            ], directory: Fixtures.root)
        #expect(run.status == 0, "\(run.stderr)")
        let report = try BenchReport.read(try Data(contentsOf: URL(fileURLWithPath: folder + "/report.json")))
        #expect(report.cache?.misses == 12 && report.cache?.hits == 0)
        #expect(report.urls?.rows?["https://cdn.example.com/hero.jpg?v={device}"]?.devices == 12)
        let records = try String(contentsOfFile: folder + "/devices.ndjson", encoding: .utf8).split(separator: "\n")
            .map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:] }
        #expect(records.count == 12)
        let urls = Set(records.compactMap { $0["url"] as? String })
        #expect(urls == Set((0..<12).map { "https://cdn.example.com/hero.jpg?v=\($0)" }))
        #expect(records.allSatisfy { $0["verdict"] as? String == "attached" && $0["cache"] as? String == "miss" })
    }

    /// The sample list, paths on the embedded server with a template among them, as the README runs it.
    @Test func theSampleListRunsAgainstTheEmbeddedServer() async throws {
        let run = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "--edge", "--urls", "Samples/urls.txt", "--devices", "50",
                "--no-progress", "--json", "-",
            ], directory: Fixtures.root)
        #expect(run.status == 0, "\(run.stderr)")
        let report = try BenchReport.read(Data(run.stdout.utf8))
        #expect(report.attached == 50 && report.urls?.rows?.count == 3, "\(run.stderr)")
        #expect(report.target.urls == "Samples/urls.txt")
        // The personalised entry misses for every device; the two shared ones once each at most.
        let personal = try #require(report.urls?.rows?["https://cdn.example.com/hero.jpg?v=personal&id={device}"])
        #expect(personal.misses == personal.devices && personal.hits == 0)
    }

    /// A redirect to another host is refused before any connection to it (no --i-own-this-host).
    @Test func aRedirectOffThisMachineIsRefused() async throws {
        let run = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "--url", "hero.jpg?to=https://192.0.2.1/hero.jpg", "--devices",
                "3",
                "--no-progress", "--no-preflight", "--json", "-",
            ], directory: Fixtures.root)
        let report = try BenchReport.read(Data(run.stdout.utf8))
        #expect(report.reasons == ["redirect-not-allowed": 3], "\(run.stderr)")
        #expect(report.samples["redirect-not-allowed"]?.contains("not on this machine") == true)
    }

    /// Mistakes in a list stop the run before it starts, naming the file and the line.
    @Test func aBrokenListIsAUsageMistakeNamingItsLine() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let list = folder + "/urls.txt"
        try "hero.jpg\nhero.jpg?u={user_id} 2\n".write(toFile: list, atomically: true, encoding: .utf8)
        let run = try await RichPushBinary.run(
            ["bench", "--serve", Fixtures.assets, "--urls", list, "--devices", "2", "--no-progress"],
            directory: Fixtures.root)
        #expect(run.status != 0 && run.stderr.contains("urls.txt line 2"), "\(run.stderr)")
        let remote = try await RichPushBinary.run(
            ["bench", "--url", "https://cdn.example.com/{device}.jpg", "--devices", "2", "--no-progress"])
        #expect(remote.status != 0 && remote.stderr.contains("not on this machine"), "\(remote.stderr)")
        let log = try await RichPushBinary.run(
            ["bench", "--serve", Fixtures.assets, "--devices", "2", "--log", folder + "/devices.txt"],
            directory: Fixtures.root)
        #expect(log.status == 64 && log.stderr.contains(".csv"), "\(log.stderr)")
        // A log that cannot be written stops the run before any device (the file is whole or absent).
        let unwritable = try await RichPushBinary.run(
            ["bench", "--serve", Fixtures.assets, "--devices", "2", "--log", folder + "/missing/devices.csv"],
            directory: Fixtures.root)
        #expect(unwritable.status == 74 && unwritable.stderr.contains("--log"), "\(unwritable.stderr)")
        #expect(!unwritable.stdout.contains("Display rate"))
    }
}
