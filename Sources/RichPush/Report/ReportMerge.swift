import Foundation

/// `richpush report merge`: the shards' reports of one run, combined into the report one machine would
/// have written.
///
/// Bench reports (`richpush bench --json`) merge counts and histograms and recompute percentiles;
/// batch summaries (`OUTDIR/summary.json` of `batch --shard`) add their counts up. Which kind the files
/// are is decided by the first one. ``init(files:htmlPath:thresholds:)`` checks the settings before
/// any file is merged.
///
/// ```swift
/// let merge = try ReportMerge(files: ["a.json", "b.json"], htmlPath: nil, thresholds: BenchThresholds())
/// let report = try merge.benchReport()
/// ```
public struct ReportMerge: Sendable {
    /// The reports to merge, in order.
    public var files: [String]
    /// The HTML report to write (bench reports only).
    public var htmlPath: String?
    /// The thresholds, applied to the merged run.
    public var thresholds: BenchThresholds
    /// Whether the files are batch summaries rather than bench reports.
    public var isBatch: Bool

    /// Checks the files and the settings that go with each kind of report.
    public init(files: [String], htmlPath: String?, thresholds: BenchThresholds) throws(ConfigurationError) {
        guard !files.isEmpty else {
            throw ConfigurationError(.invalidCombination, "a merge needs at least one JSON report")
        }
        self.files = files
        self.htmlPath = htmlPath
        self.thresholds = thresholds
        isBatch = files.first.flatMap { Self.batchSummary(at: $0) } != nil
        if isBatch, htmlPath != nil || thresholds.maxP99Milliseconds != nil {
            throw ConfigurationError(
                .invalidCombination,
                "\(Setting.html) and \(Setting.maxP99) go with bench reports; these are batch summaries")
        }
    }

    /// The merged bench report, finalized, with the thresholds evaluated for the whole run (each
    /// shard's own results are dropped). An unreadable file or one that does not merge is `unusable-input`.
    public func benchReport() throws(ConfigurationError) -> BenchReport {
        var merged: BenchReport?
        for file in files {
            guard let data = Self.contents(of: file) else {
                throw ConfigurationError(.unusableInput, "cannot read '\(file)'")
            }
            do throws(BenchReportError) {
                let report = try BenchReport.read(data)
                if merged == nil { merged = report } else { try merged?.merge(report) }
            } catch {
                throw ConfigurationError(.unusableInput, "\(file): \(error.message)")
            }
        }
        guard var result = merged else { throw ConfigurationError(.unusableInput, "no report to merge") }
        result.finalize()
        result.thresholds = thresholds.evaluate(result)
        return result
    }

    /// The merged batch summary; a file that is not a batch summary, or whose numbers cannot be right
    /// (a negative count, counts that add up past `Int.max`), is `unusable-input`.
    public func batchSummary() throws(ConfigurationError) -> BatchSummary {
        var merged: BatchSummary?
        for file in files {
            guard let summary = Self.batchSummary(at: file) else {
                throw ConfigurationError(
                    .unusableInput, "\(file) is not a batch summary.json (give every shard's OUTDIR/summary.json)")
            }
            do throws(ReportDamage) {
                try summary.check()
                if merged == nil { merged = summary } else { try merged?.merge(summary) }
            } catch {
                throw ConfigurationError(
                    .unusableInput, "\(file): a damaged batch summary (\(error.message)); write it again")
            }
        }
        guard let result = merged else { throw ConfigurationError(.unusableInput, "no summary to merge") }
        return result
    }

    /// A warning when the merged summary covers only some of the run's shards, or nil.
    public static func missingShards(_ summary: BatchSummary) -> String? {
        guard let count = summary.shardCount, let shards = summary.shards, shards != Array(1...count) else {
            return nil
        }
        return "shards \(shards) of \(count): the merged summary covers only those."
    }

    /// Why the merged batch summary fails its least display rate (``BenchThresholds/minDisplayPercent``), or nil.
    public func failedThreshold(_ summary: BatchSummary) -> String? {
        guard let failUnder = thresholds.minDisplayPercent, summary.displayRate * 100 < failUnder - 1e-9 else {
            return nil
        }
        return String(
            format: "\(Setting.failUnder) %g not met: %.1f%% would show.", failUnder, summary.displayRate * 100)
    }

    /// The largest report or summary read: a bench report of a week's timeline is a few tens of MB.
    public static let maxReportBytes = 256 << 20

    /// The bytes of the report at `path`, or nil when it is not a regular file (a FIFO would block the
    /// merge forever), cannot be read, or is larger than ``maxReportBytes``.
    static func contents(of path: String) -> Data? {
        guard let descriptor = try? SystemCall.openRegularFile(path) else { return nil }
        defer { close(descriptor) }
        guard let bytes = try? SystemCall.readAll(descriptor, upTo: maxReportBytes + 1, path: path),
            bytes.count <= maxReportBytes
        else { return nil }
        return Data(bytes)
    }

    /// The batch summary in `path`, or nil when it cannot be read or is not one.
    static func batchSummary(at path: String) -> BatchSummary? {
        guard let data = contents(of: path) else { return nil }
        return try? BatchJSON.decoder.decode(BatchSummary.self, from: data)
    }
}
