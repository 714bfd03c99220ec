import Foundation
import RichPush
import TestSupport
import Testing

@testable import RichPushCLI

/// deploy/kubernetes/ runs as it is: every manifest parses and has the fields its Job or Pod needs
/// (deploy/check-manifests.py, with python3-yaml), a broken copy fails those checks, and every command
/// a container runs, expanded by the shell as in the pod, is accepted by richpush's own parser.
@Suite(.serialized) struct DeploymentManifestTests {
    /// What check-manifests.py prints with `--commands`.
    struct Listing: Decodable {
        struct Container: Decodable {
            var file: String
            var name: String
            var container: String
            var command: [String]
            var args: [String]
            /// Variable -> [ConfigMap, key].
            var environment: [String: [String]]
            /// The Job's completions (nil for a Pod): its pods' indices are 0 to completions - 1.
            var completions: Int?
        }
        var commands: [Container]
        var configMaps: [String: [String: String]]

        enum CodingKeys: String, CodingKey {
            case commands
            case configMaps = "config_maps"
        }
    }

    static let checker = Fixtures.root + "/deploy/check-manifests.py"

    /// Runs `/usr/bin/python3` (Debian's, with python3-yaml: scripts/setup installs it) on the checker.
    static func check(_ arguments: [String], folder: String? = nil) throws -> (status: Int32, out: String, err: String)
    {
        var environment = ProcessInfo.processInfo.environment
        if let folder { environment["RICHPUSH_MANIFESTS"] = folder }
        let result = try ChildProcess.runBlocking("/usr/bin/python3", [checker] + arguments, environment: environment)
        return (result.status, result.stdout, result.stderr)
    }

    @Test func theManifestsParseAndHaveWhatTheirJobsNeed() throws {
        let result = try Self.check([])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("containers checked"), "\(result.out)")
    }

    /// The checks can fail: a copy without the Indexed mode, with a restarting pod, and with an
    /// environment variable read from a key no ConfigMap has, is refused with one line per problem.
    @Test func aBrokenCopyFailsTheChecks() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = Fixtures.root + "/deploy/kubernetes"
        for name in try FileManager.default.contentsOfDirectory(atPath: source) where name.hasSuffix(".yaml") {
            var text = try String(contentsOfFile: source + "/" + name, encoding: .utf8)
            if name == "bench-job.yaml" {
                text = text.replacingOccurrences(of: "completionMode: Indexed", with: "completionMode: NonIndexed")
                text = text.replacingOccurrences(of: "restartPolicy: Never", with: "restartPolicy: Always")
                text = text.replacingOccurrences(of: "key: START_AT", with: "key: START")
                text = text.replacingOccurrences(of: "completions: 20", with: "completions: 10")
                text = text.replacingOccurrences(of: "parallelism: 20", with: "parallelism: 10")
            }
            try text.write(toFile: folder + "/" + name, atomically: false, encoding: .utf8)
        }
        let broken = try Self.check([], folder: folder)
        #expect(broken.status == 1)
        for expected in [
            "is not an Indexed Job", "need restartPolicy Never", "reads richpush-run/START, defined nowhere",
            "runs --shard I/20, but its Job has 10 completions",
        ] {
            #expect(broken.err.contains(expected), "\(broken.err)")
        }
        // A file that is not YAML at all is an error too, not a skip.
        try "kind: [unclosed".write(toFile: folder + "/extra.yaml", atomically: false, encoding: .utf8)
        #expect(try Self.check([], folder: folder).status != 0)
    }

    /// Every container's command, run by `/bin/sh` as the pod runs it (with the Job's index and the
    /// ConfigMap's values in the environment) against a stand-in `richpush` that records its
    /// arguments, then given to the command's own parser: each must parse to its end.
    @Test func everyCommandAContainerRunsParses() async throws {
        let result = try Self.check(["--commands"])
        #expect(result.status == 0, "\(result.err)")
        let listing = try JSONDecoder().decode(Listing.self, from: Data(result.out.utf8))
        #expect(
            Set(listing.commands.map(\.name)) == [
                "richpush-bench", "richpush-batch", "richpush-merge", "richpush-serve",
            ])
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/reports", withIntermediateDirectories: true)
        let stub = folder + "/bin/richpush"
        try
            "#!/bin/sh\nfor word in \"$@\"; do printf '%s\\0' \"$word\"; done >> \"$CAPTURE\"\nprintf 'END\\0' >> \"$CAPTURE\"\n"
            .write(toFile: stub, atomically: false, encoding: .utf8)
        chmod(stub, 0o755)
        var parsed: [String] = []
        for container in listing.commands {
            var environment = ["PATH": folder + "/bin:/usr/bin:/bin", "CAPTURE": folder + "/capture"]
            for (variable, reference) in container.environment where reference.count == 2 {
                environment[variable] = listing.configMaps[reference[0]]?[reference[1]]
            }
            // The last index, as the Job's last pod sees it.
            if let completions = container.completions { environment["JOB_COMPLETION_INDEX"] = "\(completions - 1)" }
            _ = FileManager.default.createFile(atPath: folder + "/capture", contents: Data())
            var words = container.command + container.args
            if words.first == "richpush" { words[0] = stub }
            // Paths in the pod's volume point at a folder of this test instead.
            words = words.map { $0.replacingOccurrences(of: "/reports", with: folder + "/reports") }
            let shell = try await ChildProcess.run(words[0], Array(words.dropFirst()), environment: environment)
            #expect(shell.status == 0, "\(container.file) \(container.container): the shell failed: \(shell.stderr)")
            let captured = try Data(contentsOf: URL(fileURLWithPath: folder + "/capture"))
            let fields = captured.split(separator: 0, omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
            let invocations = fields.split(separator: "END").map(Array.init).filter { $0 != [] && $0 != [""] }
            #expect(!invocations.isEmpty, "\(container.file) \(container.container) runs no richpush")
            for invocation in invocations {
                try await Self.parse(invocation, label: "\(container.file) \(container.container)")
                parsed.append(invocation.prefix(2).joined(separator: " "))
            }
        }
        #expect(parsed.contains("bench --url") && parsed.contains("batch /payloads"), "\(parsed)")
        #expect(
            parsed.filter { $0 == "report merge" }.count == 2 && parsed.contains("serve \(folder)/reports"), "\(parsed)"
        )
    }

    /// Runs `words` (a command, its subcommand, its options) through the command's own parser, stopping
    /// at the end of its options: anything the parser refuses is recorded.
    static func parse(_ words: [String], label: String) async throws {
        guard let name = words.first, var command = RichPushCommand.commands.first(where: { $0.name == name }) else {
            Issue.record("\(label): \(words.first ?? "nothing") is no richpush command")
            return
        }
        var rest = Array(words.dropFirst())
        if let action = rest.first, let sub = command.subcommands.first(where: { $0.name == action }) {
            command = sub
            rest.removeFirst()
        }
        guard let run = command.run else {
            Issue.record("\(label): \(name) needs an action")
            return
        }
        do {
            var arguments = try Arguments(rest, options: command.allOptions)
            arguments.parseOnly = true
            _ = try await run(arguments)
            Issue.record("\(label): \(words) ran past its options")
        } catch let error as UsageError where error.endOfOptions {
            // The whole command line parsed.
        } catch {
            Issue.record("\(label): richpush \(words.joined(separator: " ")): \(error)")
        }
    }
}
