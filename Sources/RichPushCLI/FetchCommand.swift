import Foundation
import RichPush

/// `richpush fetch`: one URL through the fetch engine, with the device's limits, reported as JSON.
enum FetchCommand {
    // The options of this command, each declared once and read through its key.
    static let output: Key<String?> = .text(
        Option(
            "--output", "FILE",
            "Store the body in FILE (a hidden temporary beside it, renamed when the download "
                + "succeeded). '-' writes the body on stdout, and the JSON report goes to stderr "
                + "instead; a FIFO or device is written directly.", aliases: ["-o"], example: "body.bin"))
    static let repeatCount: Key<Int?> = .number(
        Option("--repeat", "N", "Download N times and print a throughput summary (bodies discarded).", example: "3"),
        in: 1...10_000_000)
    static let parallel: Key<Int?> = .number(
        Option(
            .parallel, "N",
            "Downloads in flight at once with --repeat (default \(FetchConfiguration.defaultParallel)).", example: "2"),
        in: 1...100_000)
    static let loops: Key<Int?> = .number(
        Option("--loops", "N", "Fetch loop threads (default: one per core).", example: "1"), in: 1...256)

    static let command = Command(
        name: "fetch", synopsis: "fetch URL",
        summary: "Download one asset as a service extension would, and report how it went.",
        about: """
            Download one asset as a notification service extension would, and report how it went.

            Usage: richpush fetch URL [options]

            Prints one JSON object on stdout (ok; download: status, bytes, timings in ms; or reason and
            message) and a one-line summary on stderr. With --repeat, downloads the URL many times and
            prints throughput and latency instead.
            """,
        options: [
            OptionGroup(
                "Options",
                [
                    output,
                    Keys.budget(),
                    repeatCount,
                    parallel,
                    loops,
                    ProcessCommand.verbose,
                ]),
            .download,
        ],
        footer: """
            Example:
              richpush fetch https://cdn.example.com/hero.jpg --cacert Samples/certs/ca.pem \\
                  --connect-to cdn.example.com:443:127.0.0.1:8443 -o hero.jpg
            """,
        exitNotes: [
            .failure: "the download failed (its reason is in the JSON), or one of --repeat's did",
            .usage: "usage error, or a URL without an http or https scheme (the message shows it with https://)",
            .ioError: "the body cannot be written to --output",
        ],
        run: { try await run($0) })

    static func run(_ arguments: Arguments) async throws -> ExitCode {
        var arguments = arguments
        let outputPath = try arguments.read(Self.output)
        let budget: Double? = try arguments.read(Keys.budget())
        let repeatCount: Int? = try arguments.read(Self.repeatCount)
        let parallel: Int? = try arguments.read(Self.parallel)
        let loops: Int? = try arguments.read(Self.loops)
        let verbose = try arguments.read(ProcessCommand.verbose)
        var policy = try TLSOptions(parsing: &arguments).policy
        policy.tracesTransfer = verbose && repeatCount == nil
        let urls = try arguments.positionals()
        guard urls.count == 1, let url = urls.first else { throw UsageError("fetch takes exactly one URL") }
        var configuration = try FetchConfiguration(url: url, policy: policy)
        if let budget { configuration.budget = .milliseconds(Int64(budget * 1000)) }
        configuration.repeatCount = repeatCount
        if let parallel { configuration.parallel = parallel }
        if let loops { configuration.loops = loops }
        let output = repeatCount == nil ? try OutputOptions.prepare(outputPath, option: "--output") : nil
        defer { output?.discard() }
        // The session (its engine) lives for this block only.
        return try await FetchSession.with(configuration) { session in
            if repeatCount != nil {
                let summary = await session.repeated()
                printLine(try JSON.string(summary))
                printError("richpush: " + FetchSession.summaryLine(summary))
                return summary.succeeded == summary.downloads ? .success : .failure
            }
            let run = await runInterruptibly { await session.download(writingTo: output?.descriptor ?? -1) }
            if run.interrupted {
                printError("richpush fetch: interrupted; nothing was written.")
                return .interrupted
            }
            if case .success = run.value, let output { try commit([], to: output, option: "--output") }
            for line in FetchSession.traceLines(run.value) { printError(line) }
            let json = FetchSession.report(run.value, url: configuration.url).json.text
            // With the body on stdout, the report goes to stderr so the two never mix.
            if output?.target != .standardOutput { printLine(json) } else { printError(json) }
            printError("richpush: " + FetchSession.summaryLine(run.value))
            if case .failure(let error) = run.value,
                let advice = TLSOptions.advice(for: error.tlsProblem, caFile: policy.caFile)
            {
                printError(advice)
            }
            return ExitStatus.code(for: run.value, storing: output != nil)
        }
    }
}
