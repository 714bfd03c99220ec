import Foundation
import POSIXKit
import RichPush

/// `richpush report merge`: the shards' reports of one run, combined into the report one machine would
/// have written.
///
/// Bench reports (a bench's JSON report) merge counts and histograms and recompute percentiles;
/// batch summaries (`summary.json` in each shard's output folder) add their counts up. Which kind the files
/// are is decided by the first one. ``init(files:htmlPath:thresholds:requireAllShards:)`` checks the settings before
/// any file is merged.
///
/// ```swift
/// let merge = try ReportMerge(files: ["a.json", "b.json"], htmlPath: nil, thresholds: [.init("p95<800ms")])
/// let merged = try merge.benchReport()   // merged.value, merged.warnings
/// ```
public struct ReportMerge: Sendable {
    /// The reports to merge, in order.
    public var files: [String]
    /// The HTML report to write (bench reports only).
    public var htmlPath: String?
    /// The gate's thresholds, applied to the merged run (the defaults apply to every metric these
    /// do not name; see ``Gate``).
    package var thresholds: [Threshold]
    /// Whether a missing shard is a refusal rather than a warning.
    public var requireAllShards = false
    /// Whether the files are batch summaries rather than bench reports.
    public var isBatch: Bool

    /// A threshold as the caller wrote it, with the name of where it came from.
    public struct ThresholdText: Sendable {
        public var text: String
        public var origin: String
        public init(_ text: String, origin: String = "threshold") {
            self.text = text
            self.origin = origin
        }
    }

    /// Checks the files and the settings that go with each kind
    /// of report; `thresholds` are read for the kind the files are (bench or batch metrics).
    public init(files: [String], htmlPath: String?, thresholds: [ThresholdText], requireAllShards: Bool = false)
        throws(ConfigurationError)
    {
        guard !files.isEmpty else {
            throw ConfigurationError(.invalidCombination, "a merge needs at least one JSON report")
        }
        self.files = files
        self.htmlPath = htmlPath
        self.requireAllShards = requireAllShards
        isBatch = files.first.flatMap(Self.contents(of:)).flatMap(Self.batchSummary) != nil
        if isBatch, htmlPath != nil {
            throw ConfigurationError(
                .invalidCombination, "an HTML report goes with bench reports; these are batch summaries", setting: nil)
        }
        let kind: GateKind = isBatch ? .batch : .bench
        var parsed: [Threshold] = []
        for threshold in thresholds {
            do throws(ThresholdError) {
                parsed.append(try Threshold(parsing: threshold.text, for: kind, origin: threshold.origin))
            } catch {
                throw ConfigurationError(.invalidValue, error.message)
            }
        }
        self.thresholds = parsed
    }

    /// A merged report or summary, and what the merge warns about (missing shards, inputs of older
    /// versions without an identity).
    public struct Merged<Value: Sendable>: Sendable {
        public var value: Value
        public var warnings: [String]
    }

    /// The merged bench report, finalized, with the gate decided for the whole run (each shard's own
    /// results are dropped). An unreadable file, one that does not merge, a duplicate, a foreign run
    /// or overlapping shards are `unusable-input`.
    package func benchReport() throws(ConfigurationError) -> Merged<BenchReport> {
        var merged: BenchReport?
        var check = MergeCheck()
        var alignment = StartAlignment()
        for file in files {
            guard let data = Self.contents(of: file) else {
                throw ConfigurationError(.unusableInput, "cannot read '\(file)'")
            }
            let report: BenchReport
            do throws(BenchReportError) { report = try BenchReport.read(data) } catch {
                throw ConfigurationError(.unusableInput, "\(file): \(error.message)")
            }
            do throws(MergeRefusal) {
                try check.admit(
                    file: file, identity: report.identity, shards: report.shards, shardCount: report.config.shardCount)
            } catch {
                throw ConfigurationError(.unusableInput, error.message)
            }
            alignment.admit(file: file, start: report.start, durationSeconds: report.durationSeconds)
            do throws(BenchReportError) {
                if merged == nil { merged = report } else { try merged?.merge(report) }
            } catch {
                throw ConfigurationError(.unusableInput, "\(file): \(error.message)")
            }
        }
        guard var result = merged else { throw ConfigurationError(.unusableInput, "no report to merge") }
        let warnings: [String]
        do throws(MergeRefusal) { warnings = try check.finish(requireAllShards: requireAllShards) } catch {
            throw ConfigurationError(.unusableInput, error.message)
        }
        // Shards that counted from one start ran side by side: the run lasted from that start to the
        // last shard's end, which devices/s and MB/s are computed over.
        if let shared = alignment.sharedDurationSeconds { result.durationSeconds = shared }
        result.finalize()
        result.decide(thresholds)
        return Merged(value: result, warnings: warnings + alignment.warnings)
    }

    /// The shards' bench reports merged into the run's result, as `benchReport()` merges them.
    public func benchResult() throws(ConfigurationError) -> Merged<BenchResult> {
        let merged = try benchReport()
        return Merged(value: BenchResult(report: merged.value), warnings: merged.warnings)
    }

    /// The merged batch summary, with the gate decided for the whole; a file that is not a batch
    /// summary, whose numbers cannot be right (a negative count, counts that add up past `Int.max`),
    /// a duplicate, a foreign run or overlapping shards are `unusable-input`.
    public func batchSummary() throws(ConfigurationError) -> Merged<BatchSummary> {
        var merged: BatchSummary?
        var check = MergeCheck()
        for file in files {
            let notASummary = ConfigurationError(
                .unusableInput, "\(file) is not a batch summary.json (give every shard's OUTDIR/summary.json)")
            guard let data = Self.contents(of: file) else { throw notASummary }
            do throws(ReportDamage) { try ReportDamage.checkSize(of: [UInt8](data)) } catch {
                throw ConfigurationError(.unusableInput, "\(file): not a summary richpush wrote (\(error.message))")
            }
            guard let summary = Self.batchSummary(data) else { throw notASummary }
            do throws(ReportDamage) {
                try ReportDamage.checkKeysAreUnique(in: [UInt8](data))
                try summary.check()
            } catch {
                throw ConfigurationError(
                    .unusableInput, "\(file): a damaged batch summary (\(error.message)); write it again")
            }
            do throws(MergeRefusal) {
                try check.admit(
                    file: file, identity: summary.identity, shards: summary.shards ?? [1],
                    shardCount: summary.shardCount ?? 1)
            } catch {
                throw ConfigurationError(.unusableInput, error.message)
            }
            do throws(ReportDamage) {
                if merged == nil { merged = summary } else { try merged?.merge(summary) }
            } catch {
                throw ConfigurationError(
                    .unusableInput, "\(file): a damaged batch summary (\(error.message)); write it again")
            }
        }
        guard var result = merged else { throw ConfigurationError(.unusableInput, "no summary to merge") }
        let warnings: [String]
        do throws(MergeRefusal) { warnings = try check.finish(requireAllShards: requireAllShards) } catch {
            throw ConfigurationError(.unusableInput, error.message)
        }
        result.shards = result.shards ?? [1]
        result.shardCount = result.shardCount ?? 1
        result.decide(thresholds)
        return Merged(value: result, warnings: warnings)
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

    /// The batch summary in `data`, or nil when it is not one (nor the size of one: that is decided
    /// before the decoder runs, ``ReportDamage/checkSize(of:)``).
    static func batchSummary(_ data: Data) -> BatchSummary? {
        guard (try? ReportDamage.checkSize(of: [UInt8](data))) != nil else { return nil }
        return try? BatchJSON.decoder.decode(BatchSummary.self, from: data)
    }
}
