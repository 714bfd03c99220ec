import AssetServer
import Foundation
import RichPush
import RichPushServices

/// `richpush demo`: the samples against the embedded server, as a table.
enum DemoCommand {
    // The options of this command, each declared once and read through its key.
    static let out: Key<String?> = .text(
        Option(.out, "DIR", "Keep the attachments in DIR (default: a temporary folder, removed after).", example: "out")
    )
    static let samples: Key<String?> = .text(
        Option(.samples, "DIR", "The samples folder (default: ./Samples).", example: "Samples"))
    static let json: Key<Bool> = .flag(
        Option(.json, nil, "One JSON outcome per payload on stdout instead of the table."))

    static let command = Command(
        name: "demo", synopsis: "demo",
        summary: "Serve the samples and run every sample payload through the extension, as a table.",
        about: """
            Serve the sample assets and run every sample payload through the emulated extension.

            Usage: richpush demo [options]

            Starts the embedded asset server over HTTPS on Samples/assets, maps the sample host
            cdn.example.com to it (as curl's --connect-to does; the test CA in Samples/certs is trusted),
            runs every payload in Samples/payloads through the same pipeline as 'richpush process', all
            at once, and prints one row per payload: the SDK its keys name (--sdk auto), verdict, reason,
            bytes, time, and whether it matches Samples/expected.tsv. The sample CA and host mapping are
            added to the download options given.
            """,
        options: [
            OptionGroup(
                "Options",
                [
                    out,
                    samples,
                    json,
                ]),
            .extensionPolicy(budgetDefault: 5), .app, .download, .output,
        ],
        footer: """
            Example:
              richpush demo
              richpush demo --app Samples/app     # with the sample app's extensions
              richpush process --help             # to run your own payloads
            """,
        exitNotes: [.failure: "a payload did not get the verdict Samples/expected.tsv expects"],
        run: { try await run($0) })

    static func run(_ arguments: Arguments) async throws -> ExitCode {
        var arguments = arguments
        let output = try OutputOptions(parsing: &arguments, out: out)
        let json = try arguments.read(Self.json)
        let samplesOption = try arguments.read(Self.samples)
        let options = try PolicyOptions(parsing: &arguments)
        var policy = options.policy
        if !options.budgetGiven { policy.budget = .seconds(5) }
        _ = try arguments.positionals().first.map { throw UsageError("demo takes no argument '\($0)'") }
        guard let folder = samplesOption ?? SamplesFolder.locate() else {
            throw CommandFailure(.dataError, "no Samples folder here: run from the repository, or pass --samples DIR")
        }
        let allSamples = try DemoSamples(folder: folder)
        let server = try startServer(allSamples)
        defer { server.stop() }
        let session = try DemoSession(
            samples: allSamples, policy: policy, keepFolder: output.folder, durable: output.durable,
            httpsPort: Int(server.httpsPort ?? 0), httpPort: Int(server.httpPort))
        defer { session.close() }
        // `--sdk NAME` runs the samples written for that SDK only.
        let samples = session.samples
        if !json {
            printError(
                "richpush demo: \(samples.names.count) payloads from \(samples.payloadFolder), assets served at "
                    + "\(server.httpsBaseURL ?? "") as https://cdn.example.com, budget \(policy.budget.inSeconds) s")
        }
        let run = await runInterruptibly { await session.run() }
        guard !run.interrupted else {
            printError("richpush demo: interrupted.")
            return .interrupted
        }
        let result = DemoResult(
            samples: samples, outcomes: run.value, withApp: policy.app?.contentExtensions.isEmpty == false,
            keepFolder: output.folder)
        if json {
            for line in result.lines { printLine(line.json.text) }
        } else {
            printLine(result.text)
        }
        // The sample send requests, composed: stdout keeps the payload table (or JSON lines) alone.
        let requests = DemoRequests.check(folder: folder)
        if !requests.text.isEmpty && (!json || !requests.mismatches.isEmpty) { printError(requests.text) }
        return result.unexpected == 0 && requests.mismatches.isEmpty ? .success : .failure
    }

    /// Starts the embedded server over HTTPS on the samples' assets with their test certificate.
    static func startServer(_ samples: DemoSamples) throws -> AssetServer {
        try requireFolder(samples.folder + "/assets")
        let identity: TLSIdentity
        do {
            identity = try TLSIdentity.load(
                certificate: samples.folder + "/certs/server.pem", key: samples.folder + "/certs/server-key.pem")
        } catch {
            throw CommandFailure(.dataError, error.message)
        }
        do { return try AssetServer(root: samples.folder + "/assets", tls: identity) } catch {
            throw CommandFailure(.unavailable, "the sample server could not start: \(error.message)")
        }
    }
}
