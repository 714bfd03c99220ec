import Foundation
import TestSupport
import Testing

/// `--metrics` and `--summary-md` on bench, batch and report merge: OpenMetrics text that a real
/// parser (prometheus_client's) reads, and a Markdown summary for a CI job's page.
@Suite struct MetricsExportTests {
    static let python = "/usr/bin/python3"
    static var parserInstalled: Bool {
        FileManager.default.fileExists(
            atPath: "/usr/lib/python3/dist-packages/prometheus_client/openmetrics/parser.py")
    }

    /// The samples prometheus_client's OpenMetrics parser reads from `file`, one `name{labels} value` a
    /// line (it raises on text that is not OpenMetrics, which fails the run).
    static func parsed(_ file: String) async throws -> [String] {
        let script = """
            import sys
            from prometheus_client.openmetrics.parser import text_string_to_metric_families
            for family in text_string_to_metric_families(open(sys.argv[1]).read()):
                for sample in family.samples:
                    labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
                    print(f"{sample.name}{{{labels}}} {sample.value:g}")
            """
        let run = try await ChildProcess.run(python, ["-c", script, file])
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout.split(separator: "\n").map(String.init)
    }

    @Test(.enabled(if: parserInstalled)) func benchAndItsMergeExportParseableMetrics() async throws {
        let folder = try Fixtures.temporaryFolder("richpush-metrics")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "--devices", "20", "--budget", "10s", "--ramp", "500ms",
                "--threshold", "p(95)<5000", "--metrics", folder + "/m.txt", "--summary-md", folder + "/s.md",
                "--json", folder + "/r.json", "--no-progress",
            ], directory: Fixtures.root)
        #expect(run.status == 0, "\(run.stderr)")
        let samples = try await Self.parsed(folder + "/m.txt")
        #expect(samples.contains("richpush_bench_devices{} 20"), "\(samples)")
        #expect(samples.contains("richpush_bench_display_ratio{} 1"))
        #expect(samples.contains("richpush_bench_passed{} 1"))
        #expect(samples.contains(#"richpush_bench_threshold_passed{threshold="p95<5000ms"} 1"#))
        #expect(
            samples.contains { $0.hasPrefix(#"richpush_bench_latency_seconds{phase="end_to_end",statistic="p95"}"#) })
        let markdown = try String(contentsOfFile: folder + "/s.md", encoding: .utf8)
        #expect(markdown.hasPrefix("## richpush bench: PASS"), "\(markdown)")
        // bench --junit: the gate's thresholds as cases, what made the run in the properties.
        let junitRun = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "-n", "4", "--threshold", "display>=100%", "--junit",
                folder + "/bench.xml", "--no-progress",
            ], directory: Fixtures.root)
        #expect(junitRun.status == 0, "\(junitRun.stderr)")
        let junit = try String(contentsOfFile: folder + "/bench.xml", encoding: .utf8)
        #expect(junit.contains(#"<testcase classname="richpush.gate" name="display&gt;=100%""#), "\(junit)")
        #expect(junit.contains(#"<property name="richpush.version""#))
        #expect(markdown.contains("| `p95<5000ms` |"))
        let merged = try await RichPushBinary.run(
            ["report", "merge", folder + "/r.json", "--metrics", folder + "/merged.txt", "--json", folder + "/x.json"])
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(try await Self.parsed(folder + "/merged.txt").contains("richpush_bench_devices{} 20"))
    }

    @Test(.enabled(if: parserInstalled)) func batchExportsParseableMetricsAndASummary() async throws {
        let folder = try Fixtures.temporaryFolder("richpush-batch-metrics")
        let server = try Fixtures.startServer()
        defer {
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }
        let run = try await RichPushBinary.run(
            [
                "batch", Fixtures.root + "/Samples/payloads/image-jpg.json", "--out", folder + "/out", "--metrics",
                folder + "/m.txt", "--summary-md", folder + "/s.md", "--no-progress",
            ] + Fixtures.sampleHost(server))
        #expect(run.status == 0, "\(run.stderr)")
        let samples = try await Self.parsed(folder + "/m.txt")
        #expect(samples.contains("richpush_batch_attached{} 1"), "\(samples)")
        #expect(samples.contains(#"richpush_batch_verdict_payloads{verdict="attached"} 1"#))
        let markdown = try String(contentsOfFile: folder + "/s.md", encoding: .utf8)
        #expect(markdown.hasPrefix("## richpush batch: PASS") && markdown.contains("**100.0%**"), "\(markdown)")
        // process --junit: one case for the payload, linked to its file.
        let payload = Fixtures.root + "/Samples/payloads/not-found.json"
        let process = try await RichPushBinary.run(
            ["process", payload, "--junit", folder + "/p.xml", "--out", folder + "/p"] + Fixtures.sampleHost(server))
        #expect(process.status == 1, "\(process.stderr)")
        let junit = try String(contentsOfFile: folder + "/p.xml", encoding: .utf8)
        #expect(junit.contains(#"name="not-found.json""#) && junit.contains("file=\"\(payload)\""), "\(junit)")
        #expect(junit.contains(#"<failure type="fallback/http-status""#))
    }
}
