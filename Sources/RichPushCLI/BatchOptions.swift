import Foundation
import RichPush
import RichPushRuns

/// The options of `richpush batch`, read into a ``BatchConfiguration`` and what only the command
/// line handles (the JUnit file, the progress line, Path A's flush).
struct BatchOptions {
    var configuration: BatchConfiguration
    /// `--junit FILE`.
    var junitPath: String?
    var metricsPath: String?
    var summaryPath: String?
    var progress: ProgressLine.Mode
    var tracking: TrackOptions

    /// Reads every option and the one input out of `arguments`; a mistake is a usage error (64).
    init(parsing arguments: inout Arguments) throws {
        let output = try OutputOptions(parsing: &arguments)
        guard let outFolder = output.folder else { throw UsageError("batch needs --out OUTDIR") }
        let concurrency: Int = try arguments.number("--concurrency", in: 1...100_000) ?? 32
        let recursive = arguments.flag("--recursive", "-r")
        junitPath = try arguments.value("--junit")
        metricsPath = try arguments.value("--metrics")
        summaryPath = try arguments.value("--summary-md")
        let failUnder: Double? = try arguments.number("--fail-under", in: 0...100)
        let thresholds = try BenchOptions.thresholds(try arguments.values("--threshold"), for: .batch)
        let force = arguments.flag("--force")
        progress = ProgressLine.mode(
            progress: arguments.flag("--progress"), noProgress: arguments.flag("--no-progress"),
            stderrIsTerminal: isatty(2) == 1)
        let share = arguments.flag("--share-downloads")
        let brazeRequests = arguments.flag("--braze-requests")
        let policy = try PolicyOptions(parsing: &arguments).policy
        tracking = try TrackOptions(parsing: &arguments, policy: policy)
        let mix = try TLSOptions.networkMix(&arguments, network: policy.fetch.network)
        let audience = try BenchOptions.audience(&arguments, policy: policy)
        let shard = try arguments.value("--shard").map { try Shard(parsing: $0) }
        let seed: UInt64 = try arguments.number("--seed", in: 0...UInt64.max) ?? 1
        if mix != nil && share {
            throw UsageError(
                "--share-downloads and --network-mix do not go together (one download cannot cross networks)")
        }
        let positionals = try arguments.positionals()
        guard positionals.count == 1, let input = positionals.first else {
            throw UsageError("batch takes one folder, NDJSON file or payload file")
        }
        configuration = BatchConfiguration(input: input, outFolder: outFolder)
        configuration.recursive = recursive
        configuration.durable = output.durable
        configuration.concurrency = concurrency
        configuration.force = force
        configuration.sharedDownloads = share
        configuration.policy = policy
        configuration.networkMix = mix
        configuration.audience = audience
        configuration.seed = seed
        configuration.shard = shard
        configuration.brazeRequests = brazeRequests
        configuration.thresholds =
            thresholds + (failUnder.map { [Threshold(.display, .greaterOrEqual, $0, origin: "--fail-under")] } ?? [])
    }
}
