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
        let output = try OutputOptions(parsing: &arguments, out: BatchCommand.out)
        guard let outFolder = output.folder else { throw UsageError("batch needs --out OUTDIR") }
        let concurrency = try arguments.read(BatchCommand.concurrency)
        let recursive = try arguments.read(BatchCommand.recursive)
        junitPath = try arguments.read(BatchCommand.junit)
        metricsPath = try arguments.read(Keys.metrics)
        summaryPath = try arguments.read(Keys.summaryMarkdown)
        let failUnder: Double? = try arguments.read(Keys.failUnder(devices: false))
        let thresholds = try BenchOptions.thresholds(try arguments.read(Keys.threshold(bench: false)), for: .batch)
        let force = try arguments.read(BatchCommand.force)
        progress = ProgressLine.mode(
            progress: try arguments.read(Keys.progress), noProgress: try arguments.read(Keys.noProgress),
            stderrIsTerminal: isatty(2) == 1)
        let share = try arguments.read(BatchCommand.shareDownloads)
        let brazeRequests = try arguments.read(BatchCommand.brazeRequests)
        let policy = try PolicyOptions(parsing: &arguments).policy
        tracking = try TrackOptions(parsing: &arguments, policy: policy)
        let mix = try TLSOptions.networkMix(&arguments, network: policy.fetch.network)
        let audience = try BenchOptions.audience(&arguments, policy: policy)
        let shard = try arguments.read(BatchCommand.shard).map { try Shard(parsing: $0) }
        let seed = try arguments.read(Keys.seed)
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
        if let concurrency { configuration.concurrency = concurrency }
        configuration.force = force
        configuration.sharedDownloads = share
        configuration.policy = policy
        configuration.networkMix = mix
        configuration.audience = audience
        if let seed { configuration.seed = seed }
        configuration.shard = shard
        configuration.brazeRequests = brazeRequests
        configuration.thresholds =
            thresholds + (failUnder.map { [Threshold(.display, .greaterOrEqual, $0, origin: "--fail-under")] } ?? [])
    }
}
