/// Everything a batch run is told: its input, its output folder, the extension's policy and how
/// payloads are run.
///
/// ```swift
/// var configuration = BatchConfiguration(input: "Samples/payloads", outFolder: "batch-out")
/// configuration.concurrency = 64
/// let session = try BatchSession(configuration)
/// ```
public struct BatchConfiguration: Sendable {
    /// A folder of `*.json` payloads, an NDJSON file, or a file holding one payload.
    public var input: String
    /// `--recursive`: also read `*.json` files in subfolders of ``input``.
    public var recursive = false
    /// Where payloads, attachments, results and the summary are written.
    public var outFolder: String
    /// `--fsync`: each file is flushed to disk before it gets its name.
    public var durable = false
    /// Payloads in flight at once.
    public var concurrency = 32
    /// `--force`: redo payloads an earlier run completed, and accept changed options.
    public var force = false
    /// `--share-downloads`: each URL is downloaded once per run.
    public var sharedDownloads = false
    /// The extension every payload runs through.
    public var policy = ExtensionPolicy()
    /// A network profile per payload, by share, drawn with ``seed``.
    public var networkMix: NetworkMix?
    public var seed: UInt64 = 1
    /// Every N-th payload by position in the sorted input, or all of them.
    public var shard: Shard?
    /// Path A: a delivery event per payload, when given.
    public var tracker: DeliveryTracker?
    /// The least share of requested attachments, in percent, that must show (`--fail-under`).
    public var failUnderPercent: Double = 100

    public init(input: String, outFolder: String) {
        self.input = input
        self.outFolder = outFolder
    }

    /// Why `summary` misses ``failUnderPercent``, in a sentence; nil when it meets it.
    public func thresholdFailure(_ summary: BatchSummary) -> String? {
        guard summary.displayRate * 100 < failUnderPercent - 1e-9 else { return nil }
        return String(
            format: "\(Setting.failUnder) %g not met: %.1f%% would show.", failUnderPercent, summary.displayRate * 100)
    }
}
