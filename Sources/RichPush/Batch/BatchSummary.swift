/// What `summary.json` holds, and the stderr table shows.
public struct BatchSummary: Sendable, Codable, Equatable {
    /// Payloads found in the input.
    public var total: Int
    /// Payloads with a record (done in this run or an earlier one).
    public var recorded: Int
    /// Payloads processed by this run.
    public var processed: Int
    /// Payloads skipped because an earlier run completed them.
    public var skipped: Int
    /// Whether the run was interrupted (rerun the same command to resume).
    public var interrupted: Bool
    public var verdicts: [String: Int]
    public var reasons: [String: Int]
    /// Payloads that asked for an attachment (or could not be read as a payload): all but `no-attachment`.
    public var requested: Int
    /// Payloads whose attachment would show.
    public var attached: Int
    /// `attached / requested` (1 when nothing was requested).
    public var displayRate: Double
    /// Download time percentiles in milliseconds (p50, p90, p99, max), over payloads that downloaded.
    public var downloadMilliseconds: [String: Double]
    public var elapsedSeconds: Double
    /// The expanded view each payload gets (`shows`, `default`, `would-crash`, `configuration-error`), when
    /// the app's content extensions are known (`--app`); absent otherwise.
    public var contentExtensions: [String: Int]?

    enum CodingKeys: String, CodingKey {
        case total, recorded, processed, skipped, interrupted, verdicts, reasons, requested, attached
        case contentExtensions = "content_extensions"
        case displayRate = "display_rate"
        case downloadMilliseconds = "download_ms"
        case elapsedSeconds = "elapsed_seconds"
    }
}
