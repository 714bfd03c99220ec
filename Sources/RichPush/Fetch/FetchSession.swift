import Foundation
import POSIXKit

/// One `richpush fetch` run: the fetch engine started for a ``FetchConfiguration``, one download or a
/// repeat run, and what the command line prints and returns for it.
///
/// ```swift
/// let session = try FetchSession(configuration)
/// defer { session.close() }
/// let outcome = await session.download(writingTo: descriptor)
/// print(FetchSession.summaryLine(outcome))
/// ```
public final class FetchSession: Sendable {
    /// What the session was told.
    public let configuration: FetchConfiguration
    private let engine: FetchEngine

    /// Starts the engine; an engine that cannot start is `unavailable`, with the reason, and an
    /// open-file limit that cannot hold the downloads in flight (one, or ``FetchConfiguration/parallel``
    /// with a repeat) beside the 64 descriptors richpush keeps for itself is `too-few-descriptors`.
    public init(_ configuration: FetchConfiguration) throws(ConfigurationError) {
        self.configuration = configuration
        // One download, or up to --parallel of a repeat run.
        let inFlight = configuration.repeatCount.map { min(configuration.parallel, $0) }
        try DescriptorBudget.require(
            DescriptorBudget.Need(
                concurrency: inFlight ?? 1, relayed: configuration.policy.network != nil, storing: false),
            lowering: inFlight == nil ? nil : .parallel)
        do { engine = try FetchEngine(loops: configuration.loops) } catch {
            throw ConfigurationError(.unavailable, error.engineStartMessage)
        }
    }

    /// A session for `body` alone: its engine is stopped when `body` returns or throws.
    public static func with<T>(_ configuration: FetchConfiguration, _ body: (FetchSession) async throws -> T)
        async throws -> T
    {
        let session = try FetchSession(configuration)
        defer { session.close() }
        return try await body(session)
    }

    /// Stops the engine; call once, after the last download.
    public func close() { engine.shutdown() }

    /// Downloads the URL ``FetchConfiguration/repeatCount`` times (once without it), bodies discarded.
    package func repeated() async -> DownloadRunSummary {
        await DownloadRun.run(
            engine: engine, url: configuration.url, count: configuration.repeatCount ?? 1,
            concurrency: configuration.parallel, budget: configuration.budget, policy: configuration.policy)
    }

    /// Downloads the URL once, writing the body to `descriptor` (-1: discard it).
    public func download(writingTo descriptor: Int32) async -> Result<FetchResult, FetchError> {
        do throws(FetchError) {
            return .success(try await engine.fetch(configuration.request, writingTo: descriptor))
        } catch {
            return .failure(error)
        }
    }

    /// The one-line summary of a download for stderr: its status, size and time (with the content coding and
    /// the bytes on the wire when the server sent one, and the HTTP version), or its reason and message.
    package static func summaryLine(_ outcome: Result<FetchResult, FetchError>) -> String {
        switch outcome {
        case .success(let result):
            "HTTP \(result.httpStatus), \(result.bytes) bytes in \(result.timings.total.wholeMilliseconds) ms"
                + (result.contentEncoding.map { " (\($0.escapingControlCharacters), \(result.wireBytes) on the wire)" }
                    ?? "") + (result.httpVersion.isEmpty ? "" : " over HTTP/\(result.httpVersion)")
        case .failure(let error): "\(error.code): \(error.message.escapingControlCharacters)"
        }
    }

    /// The download's trace as curl -v prints it (escaped), when the policy asked for one; empty otherwise.
    package static func traceLines(_ outcome: Result<FetchResult, FetchError>) -> [String] {
        switch outcome {
        case .success(let result): result.trace?.rendered ?? []
        case .failure(let error): error.details?.trace?.rendered ?? []
        }
    }

    /// The one-line summary of a repeat run for stderr: downloads, successes, rate, throughput and p99.
    package static func summaryLine(_ summary: DownloadRunSummary) -> String {
        String(
            format: "%d downloads, %d ok, %.0f/s, %.1f MB/s, p99 %.1f ms", summary.downloads, summary.succeeded,
            summary.downloadsPerSecond, summary.megabytesPerSecond, summary.latencyMilliseconds["p99"] ?? 0)
    }

    /// The JSON report of a download, as `fetch` prints it.
    package static func report(_ outcome: Result<FetchResult, FetchError>, url: String) -> FetchReport {
        var report = FetchReport(url: url)
        switch outcome {
        case .success(let result): report.record(result)
        case .failure(let error): report.record(error)
        }
        // Without a URL's user name or password (URLCredentials).
        report.url = URLCredentials.stripped(report.url)
        report.message = URLCredentials.stripped(report.message)
        report.hint = URLCredentials.stripped(report.hint)
        report.download = report.download?.strippingURLCredentials()
        return report
    }
}
