import RichPush

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
    /// Also read `*.json` files in subfolders of ``input``.
    public var recursive = false
    /// Where payloads, attachments, results and the summary are written.
    public var outFolder: String
    /// Each file is flushed to disk before it gets its name.
    public var durable = false
    /// Payloads in flight at once.
    public var concurrency = Self.defaultConcurrency
    /// Payloads in flight when none is given.
    package static let defaultConcurrency = 32
    /// Redo payloads an earlier run completed, and accept changed settings.
    public var force = false
    /// Each URL is downloaded once per run.
    public var sharedDownloads = false
    /// The extension every payload runs through.
    public var policy = ExtensionPolicy()
    /// A network profile per payload, by share, drawn with ``seed``.
    package var networkMix: NetworkMix?
    /// A phone per payload, by share (``AudienceMix``), drawn with ``seed``; nil: every payload on the
    /// policy's own.
    package var audience: AudienceMix?
    public var seed: UInt64 = NetworkMix.defaultSeed
    /// Every N-th payload by position in the sorted input, or all of them.
    package var shard: Shard?
    /// Path A: a delivery event per payload, when given.
    package var tracker: DeliveryTracker?
    /// The gate's thresholds; the defaults (`display>=100%`, `would_crash==0`,
    /// `configuration_error==0`) apply to every metric these do not name (see ``Gate``).
    package var thresholds: [Threshold] = []
    /// Every input is a Braze send request: composed first (`Composer`), then run (`--braze-requests`).
    public var brazeRequests = false

    public init(input: String, outFolder: String) {
        self.input = input
        self.outFolder = outFolder
    }
}
