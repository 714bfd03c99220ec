import Foundation
import RichPush

/// `richpush fetch`: one URL through the fetch engine, with the device's limits, reported as JSON.
enum FetchCommand {
    static let help = """
        Download one asset as a notification service extension would, and report how it went.

        Usage: richpush fetch URL [options]

        Prints one JSON object on stdout (ok; download: status, bytes, timings in ms; or error and message)
        and a one-line summary on stderr. Exit status 0 when the download succeeded, 1 when it failed,
        64 for a URL without a scheme (the message shows it with https://), 74 when -o cannot be written.
        With --repeat, downloads the URL many times and prints throughput and latency instead.

        Options:
          -o, --output FILE       Store the body in FILE (a hidden temporary beside it, renamed when the
                                  download succeeded). '-' writes the body on stdout, and the JSON report
                                  goes to stderr instead; a FIFO or device is written directly.
          --budget SECONDS        Overall deadline, like the extension's (default 30).
          --repeat N              Download N times and print a throughput summary (bodies discarded).
          --parallel N            Downloads in flight at once with --repeat (default 16).
          --loops N               Fetch loop threads (default: one per core).
        """ + "\n" + TLSOptions.help + "\n\n" + """
            Example:
              richpush fetch https://cdn.example.com/hero.jpg --cacert Samples/certs/ca.pem \\
                  --connect-to cdn.example.com:443:127.0.0.1:8443 -o hero.jpg
            """

    static func run(_ arguments: Arguments) async throws -> ExitCode {
        var arguments = arguments
        let outputPath = try arguments.value("-o", "--output")
        let budget: Double = try arguments.number("--budget", in: 0.001...3600) ?? 30
        let repeatCount: Int? = try arguments.number("--repeat", in: 1...10_000_000)
        let parallel: Int = try arguments.number("--parallel", in: 1...100_000) ?? 16
        let loops: Int = try arguments.number("--loops", in: 1...256) ?? ProcessInfo.processInfo.activeProcessorCount
        let policy = try TLSOptions(parsing: &arguments).policy
        let positionals = try arguments.positionals()
        guard positionals.count == 1, let url = positionals.first else {
            throw UsageError("fetch takes exactly one URL")
        }
        try checkScheme(url)
        let output = repeatCount == nil ? try OutputOptions.prepare(outputPath, option: "-o") : nil
        defer { output?.discard() }
        let engine: FetchEngine
        do { engine = try FetchEngine(loops: loops) } catch {
            throw CommandFailure(.unavailable, error.engineStartMessage)
        }
        defer { engine.shutdown() }
        let budgetDuration = Duration.milliseconds(Int64(budget * 1000))
        if let repeatCount {
            let summary = await DownloadRun.run(
                engine: engine, url: url, count: repeatCount, concurrency: parallel, budget: budgetDuration,
                policy: policy)
            printLine(try JSON.string(summary))
            printError(
                String(
                    format: "richpush: %d downloads, %d ok, %.0f/s, %.1f MB/s, p99 %.1f ms", summary.downloads,
                    summary.succeeded, summary.downloadsPerSecond, summary.megabytesPerSecond,
                    summary.latencyMilliseconds["p99"] ?? 0))
            return summary.succeeded == summary.downloads ? .success : .failure
        }
        let request = FetchRequest(url: url, budget: budgetDuration, policy: policy)
        var report = FetchReport(url: url)
        let run = await runInterruptibly { await download(request, engine: engine, output: output) }
        if run.interrupted {
            printError("richpush fetch: interrupted; nothing was written.")
            return .interrupted
        }
        // With the body on stdout, the report goes to stderr so the two never mix.
        let reportToStdout = output?.target != .standardOutput
        switch run.value {
        case .success(let result):
            report.record(result)
            if let output {
                try commit([], to: output, option: "-o")
            }
            let json = try JSON.string(report)
            if reportToStdout { printLine(json) } else { printError(json) }
            printError(
                "richpush: HTTP \(result.httpStatus), \(result.bytes) bytes in \(result.timings.total.wholeMilliseconds) ms"
            )
            return .success
        case .failure(let error):
            report.record(error)
            let json = try JSON.string(report)
            if reportToStdout { printLine(json) } else { printError(json) }
            printError("richpush: \(error.code): \(error.message.escapingControlCharacters)")
            // The body could not be stored: an output problem, not the server's.
            return output != nil && error.code == .storageFailed ? .ioError : .failure
        }
    }

    /// A URL without a scheme is a usage error that shows the URL with one.
    static func checkScheme(_ url: String) throws {
        let lowered = url.lowercased()
        guard !lowered.hasPrefix("https://"), !lowered.hasPrefix("http://") else { return }
        if let range = url.range(of: "://") {
            throw UsageError(
                "'\(url.escapingControlCharacters)': richpush downloads http:// and https:// URLs only, not "
                    + "\(String(url[..<range.lowerBound]).escapingControlCharacters)://")
        }
        let corrected = "https://" + url.drop(while: { $0 == "/" })
        throw UsageError(
            "'\(url.escapingControlCharacters)' has no scheme; did you mean \(corrected.escapingControlCharacters) ?")
    }

    private static func download(_ request: FetchRequest, engine: FetchEngine, output: PendingOutput?) async
        -> Result<FetchResult, FetchError>
    {
        do throws(FetchError) {
            return .success(try await engine.fetch(request, writingTo: output?.descriptor ?? -1))
        } catch {
            return .failure(error)
        }
    }
}
