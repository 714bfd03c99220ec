import Foundation
import RichPush

/// `richpush fetch`: one URL through the fetch engine, with the device's limits, reported as JSON.
enum FetchCommand {
    static let help = """
        Download one asset as a notification service extension would, and report how it went.

        Usage: richpush fetch URL [options]

        Prints one JSON object on stdout (ok; download: status, bytes, timings in ms; or error and message)
        and a one-line summary on stderr. Exit status 0 when the download succeeded, 1 when it failed.
        With --repeat, downloads the URL many times and prints throughput and latency instead.

        Options:
          -o, --output FILE       Store the body in FILE (written to a hidden temporary beside it, then renamed).
          --budget SECONDS        Overall deadline, like the extension's (default 30).
          --connect-timeout SEC   Time allowed for DNS, TCP and TLS (default 10).
          --max-bytes N           Refuse bodies larger than N bytes (default: no cap).
          --max-redirs N          Redirects followed at most (default 5).
          --stall-window SECONDS  Fail when under 1 byte/s arrives for this long (default: off).
          --allow-http            Allow http:// (an extension whose Info.plist allows arbitrary loads).
          --cacert FILE           Trust this CA (PEM) besides the system's; verification is never off.
          --connect-to H:P:H2:P2  Connect to H2:P2 for requests to H:P, as curl does. Repeatable.
          --reuse                 Share connections between downloads (default: a fresh one each).
          --repeat N              Download N times and print a throughput summary (bodies discarded).
          --parallel N            Downloads in flight at once with --repeat (default 16).
          --loops N               Fetch loop threads (default: one per core).
          --network PROFILE       Download over an emulated network (3g, lte, ... or down=2mbit,rtt=150ms);
                                  see 'richpush network list'.

        Example:
          richpush fetch https://cdn.example.com/hero.jpg --cacert Samples/certs/ca.pem \\
              --connect-to cdn.example.com:443:127.0.0.1:8443 -o hero.jpg
        """

    static func run(_ arguments: Arguments) async throws -> ExitCode {
        var arguments = arguments
        let output = try arguments.value("-o", "--output")
        let budget: Double = try arguments.number("--budget", in: 0.001...3600) ?? 30
        let repeatCount: Int? = try arguments.number("--repeat", in: 1...10_000_000)
        let parallel: Int = try arguments.number("--parallel", in: 1...100_000) ?? 16
        let loops: Int = try arguments.number("--loops", in: 1...256) ?? ProcessInfo.processInfo.activeProcessorCount
        var policy = try policyOptions(&arguments)
        if let network = try arguments.value("--network") {
            do throws(NetworkError) { policy.network = try NetworkProfile(parsing: network) } catch {
                throw UsageError("--network: \(error.message)")
            }
        }
        let positionals = try arguments.positionals()
        guard positionals.count == 1, let url = positionals.first else {
            throw UsageError("fetch takes exactly one URL")
        }
        let engine: FetchEngine
        do { engine = try FetchEngine(loops: loops) } catch {
            printError("richpush fetch: \(ProcessCommand.engineFailure(error))")
            return .software
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
        switch run.value {
        case .success(let result):
            report.record(result)
            printLine(try JSON.string(report))
            printError(
                "richpush: HTTP \(result.httpStatus), \(result.bytes) bytes in \(result.timings.total.wholeMilliseconds) ms"
            )
            return .success
        case .failure(let error):
            report.record(error)
            printLine(try JSON.string(report))
            printError("richpush: \(error.code): \(error.message.escapingControlCharacters)")
            return .failure
        }
    }

    private static func download(_ request: FetchRequest, engine: FetchEngine, output: String?) async -> Result<
        FetchResult, FetchError
    > {
        do throws(FetchError) {
            guard let output else { return .success(try await engine.fetch(request, writingTo: -1)) }
            // An exclusive temporary with a random name beside the output: a stale or planted
            // `.part` file cannot block or redirect the download.
            let temporary: TemporaryFile
            do throws(SystemError) { temporary = try OutputFile.create(for: output) } catch {
                throw FetchError(.storageFailed, error.message)
            }
            defer { temporary.discard() }
            let result = try await engine.fetch(request, writingTo: temporary.descriptor)
            do throws(SystemError) { try temporary.commit(as: output) } catch {
                throw FetchError(.storageFailed, error.message)
            }
            return .success(result)
        } catch {
            return .failure(error)
        }
    }

    /// Reads the options every command that downloads shares into a ``FetchPolicy``.
    static func policyOptions(_ arguments: inout Arguments) throws -> FetchPolicy {
        var policy = FetchPolicy()
        policy.allowHTTP = arguments.flag("--allow-http")
        if arguments.flag("--reuse") { policy.connections = .shared }
        if let seconds: Double = try arguments.number("--connect-timeout", in: 0.001...3600) {
            policy.connectTimeout = .milliseconds(Int64(seconds * 1000))
        }
        if let seconds: Double = try arguments.number("--stall-window", in: 1...3600) {
            policy.stallWindow = .milliseconds(Int64(seconds * 1000))
        }
        policy.maxBytes = try arguments.number("--max-bytes", in: 0...Int64.max)
        policy.maxRedirects = try arguments.number("--max-redirs", in: 0...50) ?? policy.maxRedirects
        if let caFile = try arguments.value("--cacert") {
            guard FileManager.default.isReadableFile(atPath: caFile) else {
                throw UsageError("--cacert \(caFile): no readable file there")
            }
            policy.caFile = caFile
        }
        do {
            policy.hostMappings = try arguments.values("--connect-to").map { text throws in
                try HostMapping(parsing: text)
            }
        } catch let error as FetchError {
            throw UsageError("--connect-to \(error.message)")
        }
        return policy
    }
}

/// The JSON `richpush fetch` prints for one download: the same `download` object as `process --report`.
struct FetchReport: Codable {
    var url: String
    var ok = false
    var download: Outcome.Download?
    var error: String?
    var message: String?

    init(url: String) { self.url = url }

    mutating func record(_ result: FetchResult) {
        ok = true
        download = Outcome.Download(result)
    }

    mutating func record(_ failure: FetchError) {
        download = failure.details.map(Outcome.Download.init)
        ok = false
        error = failure.code.description
        message = failure.message
    }
}

/// JSON text with sorted keys and snake_case names, as `jq` users expect.
enum JSON {
    static func string<T: Encodable>(_ value: T, pretty: Bool = false) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if pretty { encoder.outputFormatting.insert(.prettyPrinted) }
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
