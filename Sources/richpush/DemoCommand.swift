import AssetServer
import Foundation
import RichPush

/// `richpush demo`: the samples against the embedded server, as a table.
enum DemoCommand {
    static let help = """
        Serve the sample assets and run every sample payload through the emulated extension.

        Usage: richpush demo [options]

        Starts the embedded asset server over HTTPS on Samples/assets, maps the sample host
        cdn.example.com to it (as curl's --connect-to does; the test CA in Samples/certs is trusted),
        runs every payload in Samples/payloads through the same pipeline as 'richpush process', all
        at once, and prints one row per payload: verdict, reason, bytes, time, and whether it matches
        Samples/expected.tsv. Exit status 0 when every payload got its expected verdict.

        Options:
          --budget SECONDS   The extension's budget (default 5 here, so the slow-server sample expires
                             quickly; the device's is 30).
          --out DIR          Keep the attachments in DIR (default: a temporary folder, removed after).
          --samples DIR      The samples folder (default: ./Samples).
          --json             One JSON outcome per payload on stdout instead of the table.
          Plus the options of 'richpush process' (--push-type, --max-bytes, ...); the sample CA and host
          mapping are added to those given.

        Example:
          richpush demo
          richpush process --help     # to run your own payloads
        """

    static func run(_ arguments: Arguments) async throws -> ExitCode {
        var arguments = arguments
        let output = try OutputOptions(parsing: &arguments)
        let keep = output.folder
        let json = arguments.flag("--json")
        let samplesOption = try arguments.value("--samples")
        let options = try PolicyOptions(parsing: &arguments)
        var policy = options.policy
        if !options.budgetGiven { policy.budget = .seconds(5) }
        let withApp = policy.app?.contentExtensions.isEmpty == false
        _ = try arguments.positionals().first.map { throw UsageError("demo takes no argument '\($0)'") }
        guard let samples = samplesOption ?? SamplesFolder.locate() else {
            throw CommandFailure(.dataError, "no Samples folder here: run from the repository, or pass --samples DIR")
        }
        let payloadFolder = samples + "/payloads"
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: payloadFolder).filter { $0.hasSuffix(".json") }
                .sorted()
        } catch {
            throw CommandFailure(
                .dataError, "no payloads in '\(payloadFolder)': give the Samples folder with --samples DIR")
        }
        let expectations = try SampleExpectations(
            text: (try? String(contentsOfFile: samples + "/expected.tsv", encoding: .utf8)) ?? "")
        try requireFolder(samples + "/assets")
        let identity: TLSIdentity
        do {
            identity = try TLSIdentity.load(
                certificate: samples + "/certs/server.pem", key: samples + "/certs/server-key.pem")
        } catch {
            throw CommandFailure(.dataError, error.message)
        }
        let server: AssetServer
        do { server = try AssetServer(root: samples + "/assets", tls: identity) } catch {
            throw CommandFailure(.unavailable, "the sample server could not start: \(error.message)")
        }
        defer { server.stop() }
        // The bundled sample app's personalized extension reads `cert_title` (Samples/app/README.md).
        if policy.requiredKeys.isEmpty,
            policy.app?.contentExtensions.contains(where: {
                URL(fileURLWithPath: $0.plist).standardizedFileURL.path.hasPrefix(
                    URL(fileURLWithPath: samples + "/app").standardizedFileURL.path + "/")
            }) == true
        {
            policy.requiredKeys = [RequiredKey(key: "cert_title", extensionName: "PersonalizedContent")]
        }
        policy.fetch.caFile = samples + "/certs/ca.pem"
        policy.fetch.hostMappings += [
            HostMapping(
                host: "cdn.example.com", port: "443", targetHost: "127.0.0.1", targetPort: "\(server.httpsPort ?? 0)"),
            HostMapping(host: "cdn.example.com", port: "80", targetHost: "127.0.0.1", targetPort: "\(server.httpPort)"),
        ]
        let folder = keep ?? NSTemporaryDirectory() + "richpush-demo-\(UUID().uuidString)"
        defer { if keep == nil { try? FileManager.default.removeItem(atPath: folder) } }
        let engine: FetchEngine
        do { engine = try FetchEngine() } catch {
            throw CommandFailure(.unavailable, ProcessCommand.engineFailure(error))
        }
        defer { engine.shutdown() }
        let store: AttachmentStore
        do { store = try AttachmentStore(folder: folder, durable: output.durable) } catch {
            throw CommandFailure(.ioError, error.message)
        }
        defer { store.removeScratch() }
        let service = ServiceExtension(engine: engine, store: store, policy: policy)
        if !json {
            printError(
                "richpush demo: \(names.count) payloads from \(payloadFolder), assets served at \(server.httpsBaseURL ?? "")"
                    + " as https://cdn.example.com, budget \(policy.budget.inSeconds) s")
        }
        let run = await runInterruptibly {
            await withTaskGroup(of: (String, Outcome).self) { group in
                for name in names {
                    group.addTask {
                        let bytes = Array(
                            (try? Data(contentsOf: URL(fileURLWithPath: payloadFolder + "/" + name))) ?? Data())
                        return (name, await service.process(bytes).outcome)
                    }
                }
                return await group.reduce(into: [String: Outcome]()) { $0[$1.0] = $1.1 }
            }
        }
        guard !run.interrupted else {
            printError("richpush demo: interrupted.")
            return .interrupted
        }
        let outcomes = run.value
        var table = TextTable(
            ["PAYLOAD", "VERDICT", "REASON"] + (withApp ? ["EXPANDED VIEW"] : []) + ["BYTES", "TIME", "EXPECTED"],
            rightAligned: withApp ? [4, 5] : [3, 4])
        var unexpected = 0
        for name in names {
            guard let outcome = outcomes[name] else { continue }
            let expected = expectations.byPayload[name]
            let content = SampleExpectations.contentLabel(outcome.contentExtension)
            let matches = expected.map {
                $0.verdict == outcome.verdict && $0.reason == outcome.reason
                    && (!withApp || $0.content == nil || $0.content == content)
            }
            if matches == false { unexpected += 1 }
            if json {
                // Without --out the attachments are removed with the run's temporary folder: no file named.
                var shown = outcome
                if keep == nil { shown.attachment?.file = nil }
                printLine(try JSON.string(DemoLine(payload: name, expectedMatch: matches, outcome: shown)))
                continue
            }
            let expectedText = expected.map {
                "\($0.verdict.rawValue)/\($0.reason.rawValue)" + (withApp ? " " + ($0.content ?? "-") : "")
            }
            table.append(
                [name, outcome.verdict.rawValue, outcome.reason.rawValue] + (withApp ? [content] : []) + [
                    outcome.download.map { String($0.bytes) } ?? "-",
                    String(format: "%.0f ms", outcome.elapsedMilliseconds),
                    matches.map { $0 ? "yes" : "NO, expected \(expectedText ?? "")" } ?? "-",
                ])
        }
        if !json {
            printLine(table.rendered)
            // Why each requested attachment would not show, in the words `process` uses.
            let why = names.compactMap { name -> String? in
                guard let outcome = outcomes[name] else { return nil }
                var lines: [String] = []
                if !outcome.verdict.showsAsIntended {
                    lines.append(
                        "  \(name): \(outcome.message.escapingControlCharacters)"
                            + (outcome.hint.map { " Hint: \($0.escapingControlCharacters)" } ?? ""))
                }
                if let view = outcome.contentExtension, view.outcome != .shows, view.reason != "no-category" {
                    lines.append(
                        "  \(name) (expanded view): \(view.message.escapingControlCharacters)"
                            + (view.hint.map { " Hint: \($0.escapingControlCharacters)" } ?? ""))
                }
                return lines.isEmpty ? nil : lines.joined(separator: "\n")
            }
            if !why.isEmpty { printLine("\nWhy:\n" + why.joined(separator: "\n")) }
            let counts = Dictionary(grouping: outcomes.values, by: \.verdict).mapValues(\.count)
            let summary = Verdict.allCases.compactMap { verdict in counts[verdict].map { "\($0) \(verdict.rawValue)" } }
            printLine("\n\(names.count) payloads: " + summary.joined(separator: ", ") + ".")
            printLine(
                unexpected == 0
                    ? "Every payload got the verdict Samples/expected.tsv expects."
                    : "\(unexpected) payload(s) did not get the expected verdict.")
            if let keep { printLine("Attachments are in \(keep).") }
            printLine("Run one yourself: richpush process --help")
        }
        return unexpected == 0 ? .success : .failure
    }

    /// `payload` and `expected_match` around the members of the shared outcome shape.
    private struct DemoLine: Encodable {
        var payload: String
        var expectedMatch: Bool?
        var outcome: Outcome

        enum CodingKeys: String, CodingKey {
            case payload
            case expectedMatch = "expected_match"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(payload, forKey: .payload)
            try container.encodeIfPresent(expectedMatch, forKey: .expectedMatch)
            try outcome.encode(to: encoder)
        }
    }
}
