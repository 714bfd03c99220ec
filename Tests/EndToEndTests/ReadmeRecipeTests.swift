import Foundation
import TestSupport
import Testing

/// The README's GitHub Actions recipe, run as written: its workflow is YAML a runner reads, and its
/// gate step's commands, in a workspace holding a folder of the sample payloads, fail the job (the
/// samples hold every classic mistake) with the JUnit file, the Markdown summary and the metrics the
/// later steps upload. The samples' host is mapped to the embedded server as the recipe says
/// (`--connect-to`, `--cacert`), the only words added to the step.
@Suite struct ReadmeRecipeTests {
    /// The YAML block that follows the recipe's heading.
    static func workflow() throws -> String {
        let readme = try String(contentsOfFile: Fixtures.root + "/README.md", encoding: .utf8)
        let section = try #require(readme.range(of: "## Recipe: gate a folder of payloads in GitHub Actions"))
        let rest = readme[section.upperBound...]
        let open = try #require(rest.range(of: "```yaml\n"))
        let close = try #require(rest[open.upperBound...].range(of: "\n```"))
        return String(rest[open.upperBound..<close.lowerBound])
    }

    /// The `run:` of the step named `name`: its one line, or its block's lines unindented.
    static func run(of step: String, in workflow: String) throws -> String {
        let lines = workflow.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let named = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "- name: \(step)" })
        let run = try #require(
            lines[named...].firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix("run: ") })
        let inline = lines[run].trimmingCharacters(in: .whitespaces).dropFirst("run: ".count)
        if inline != "|" { return String(inline) }
        let indent = lines[run + 1].prefix { $0 == " " }.count
        var body: [String] = []
        for line in lines[(run + 1)...] {
            guard line.count > indent, line.prefix(indent).allSatisfy({ $0 == " " }) else { break }
            body.append(String(line.dropFirst(indent)))
        }
        return body.joined(separator: "\n")
    }

    @Test func theWorkflowIsYAMLWithItsSteps() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(try Self.workflow().utf8).write(to: URL(fileURLWithPath: folder + "/rich-push.yml"))
        let read = try await ChildProcess.run(
            "/usr/bin/python3",
            [
                "-c",
                "import sys, yaml; w = yaml.safe_load(open(sys.argv[1])); "
                    + "print('|'.join(s.get('name', s.get('uses', '')) for s in w['jobs']['payloads']['steps']))",
                folder + "/rich-push.yml",
            ])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(
            read.stdout.contains("Install richpush|Gate the payloads|Summary|actions/upload-artifact"), "\(read.stdout)"
        )
    }

    @Test func theGateStepFailsTheSamplesWithItsReports() async throws {
        let workflow = try Self.workflow()
        let gate = try Self.run(of: "Gate the payloads", in: workflow)
        let summary = try Self.run(of: "Summary", in: workflow)
        #expect(gate.hasPrefix("richpush batch push/payloads "), "\(gate)")

        let workspace = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: workspace) }
        try FileManager.default.createDirectory(atPath: workspace + "/push", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.root + "/Samples/payloads", toPath: workspace + "/push/payloads")
        let server = try Fixtures.startServer()
        defer { server.stop() }
        let mapped =
            gate + " --cacert \(Fixtures.caFile) --connect-to cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)"
        // The runner's shell: bash -e; `richpush` on PATH is the binary under test.
        let bin = (RichPushBinary.path as NSString).deletingLastPathComponent
        let linked = workspace + "/bin"
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: linked + "/richpush", withDestinationPath: RichPushBinary.path)
        let path = linked + ":" + bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let run = try await Shell.run("set -e\n" + mapped, in: workspace, environment: ["PATH": path])
        #expect(run.status == 1, "the samples hold failing payloads: the gate fails the step\n\(run.stderr)")
        #expect(run.stderr.contains("Gate: FAIL"), "\(run.stderr)")

        let junit = try String(contentsOfFile: workspace + "/junit.xml", encoding: .utf8)
        #expect(junit.contains("<testsuite") && junit.contains("<failure"), "\(junit.prefix(400))")
        let metrics = try String(contentsOfFile: workspace + "/metrics.txt", encoding: .utf8)
        #expect(metrics.contains("richpush_batch_display_ratio") && metrics.hasSuffix("# EOF\n"))
        let results = try String(contentsOfFile: workspace + "/richpush-out/results.ndjson", encoding: .utf8)
        #expect(results.split(separator: "\n").count == 40)

        // The summary step appends the Markdown summary to the job page's file.
        let page = workspace + "/step-summary.md"
        let appended = try await Shell.run(
            "set -e\n" + summary, in: workspace, environment: ["GITHUB_STEP_SUMMARY": page])
        #expect(appended.status == 0, "\(appended.stderr)")
        let shown = try String(contentsOfFile: page, encoding: .utf8)
        #expect(shown.contains("richpush batch: FAIL") && shown.contains("| `display>=100%` |"), "\(shown)")
    }
}
