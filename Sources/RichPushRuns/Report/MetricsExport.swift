import Foundation
import RichPush

/// A run's results as OpenMetrics text (`--metrics FILE`): what a Prometheus Pushgateway, a
/// node-exporter textfile collector or a Grafana dashboard reads.
///
/// Every family is a gauge with a `# HELP` (the numbers of one finished run, not a counter that
/// grows), names are `richpush_bench_*` or `richpush_batch_*`, durations are in seconds (`# UNIT`),
/// shares are ratios from 0 to 1, and the text ends with `# EOF`, as the OpenMetrics 1.0
/// specification asks.
///
/// ```swift
/// let text = OpenMetrics.text(bench: report)   // "# TYPE richpush_bench_devices gauge\n..."
/// ```
package enum OpenMetrics {
    /// One family: a gauge, its help, its unit, and its samples (labels, value).
    struct Family {
        var name: String
        var help: String
        var unit: String? = nil
        var samples: [(labels: [(String, String)], value: Double)]
    }

    package static func text(bench report: BenchReport) -> String {
        var families = [
            Family(
                name: "richpush_bench_devices", help: "Devices in the run.", samples: [([], Double(report.devices))]),
            Family(
                name: "richpush_bench_attached", help: "Devices whose attachment would show.",
                samples: [([], Double(report.attached))]),
            Family(
                name: "richpush_bench_display_ratio", help: "Share of the devices that would show the attachment.",
                samples: [([], report.displayRate)]),
            Family(
                name: "richpush_bench_not_started", help: "Devices never run (a time limit, an interruption).",
                samples: [([], Double(report.notStarted))]),
            Family(
                name: "richpush_bench_duration_seconds", help: "How long the run lasted.", unit: "seconds",
                samples: [([], report.durationSeconds)]),
            counts("richpush_bench_verdict_devices", "Devices by verdict.", "verdict", report.verdicts),
            counts("richpush_bench_reason_devices", "Devices by reason code.", "reason", report.reasons),
            counts("richpush_bench_status_devices", "Devices by HTTP status.", "code", report.statusCodes),
        ]
        var latency: [(labels: [(String, String)], value: Double)] = []
        for (phase, values) in report.percentilesMilliseconds.sorted(by: { $0.key < $1.key }) {
            for key in ["p50", "p90", "p95", "p99", "max"] {
                if let milliseconds = values[key] {
                    latency.append(([("phase", phase), ("statistic", key)], milliseconds / 1000))
                }
            }
        }
        families.append(
            Family(
                name: "richpush_bench_latency_seconds",
                help: "Latency of each phase (dns, connect, tls, first_byte, download, end_to_end) by statistic.",
                unit: "seconds", samples: latency))
        families.append(
            rows(
                "richpush_bench_network_display_ratio", "Display share per network profile.", "network",
                report.networks))
        families.append(
            rows("richpush_bench_phone_display_ratio", "Display share per phone (--ios-mix).", "phone", report.audience)
        )
        families += gate(prefix: "richpush_bench", report.thresholds, passed: report.passed)
        return render(families)
    }

    package static func text(batch summary: BatchSummary) -> String {
        var families = [
            Family(
                name: "richpush_batch_payloads", help: "Payloads in the input.", samples: [([], Double(summary.total))]),
            Family(
                name: "richpush_batch_requested", help: "Payloads that asked for an attachment.",
                samples: [([], Double(summary.requested))]),
            Family(
                name: "richpush_batch_attached", help: "Payloads whose attachment would show.",
                samples: [([], Double(summary.attached))]),
            Family(
                name: "richpush_batch_display_ratio",
                help: "Share of the payloads that asked for an attachment that would show it.",
                samples: [([], summary.displayRate)]),
            Family(
                name: "richpush_batch_reused", help: "Results an earlier run made (a resume).",
                samples: [([], Double(summary.skipped))]),
            Family(
                name: "richpush_batch_not_run", help: "Payloads never run (an interruption).",
                samples: [([], Double(summary.notRun))]),
            counts("richpush_batch_verdict_payloads", "Payloads by verdict.", "verdict", summary.verdicts),
            counts("richpush_batch_reason_payloads", "Payloads by reason code.", "reason", summary.reasons),
            Family(
                name: "richpush_batch_download_seconds", help: "Download time by statistic.", unit: "seconds",
                samples: summary.downloadMilliseconds.sorted { $0.key < $1.key }.map {
                    ([("statistic", $0.key)], $0.value / 1000)
                }),
        ]
        families.append(
            Family(
                name: "richpush_batch_network_display_ratio", help: "Display share per network profile.",
                samples: (summary.networks ?? [:]).sorted { $0.key < $1.key }.map {
                    ([("network", $0.key)], $0.value.displayRate)
                }))
        families.append(
            Family(
                name: "richpush_batch_phone_display_ratio", help: "Display share per phone (--ios-mix).",
                samples: (summary.audience ?? [:]).sorted { $0.key < $1.key }.map {
                    ([("phone", $0.key)], $0.value.displayRate)
                }))
        families += gate(prefix: "richpush_batch", summary.thresholds ?? [], passed: summary.passed)
        return render(families)
    }

    static func counts(_ name: String, _ help: String, _ label: String, _ values: [String: Int]) -> Family {
        Family(
            name: name, help: help,
            samples: values.sorted { $0.key < $1.key }.map { ([(label, $0.key)], Double($0.value)) })
    }

    static func rows(_ name: String, _ help: String, _ label: String, _ rows: [String: BenchReport.Network]?) -> Family
    {
        Family(
            name: name, help: help,
            samples: (rows ?? [:]).sorted { $0.key < $1.key }.map { ([(label, $0.key)], $0.value.displayRate) })
    }

    /// The gate: each threshold's measured value and whether it passed, and the decision.
    static func gate(prefix: String, _ results: [ThresholdResult], passed: Bool?) -> [Family] {
        [
            Family(
                name: prefix + "_threshold_passed", help: "Whether each threshold of the gate was met (1) or not (0).",
                samples: results.map { ([("threshold", $0.expression ?? $0.name)], $0.passed ? 1 : 0) }),
            Family(
                name: prefix + "_threshold_value", help: "Each threshold's measured value, in its unit (%, ms, count).",
                samples: results.map { ([("threshold", $0.expression ?? $0.name)], $0.actual) }),
            Family(
                name: prefix + "_passed", help: "Whether the gate passed (1) or failed (0).",
                samples: passed.map { [([], $0 ? 1 : 0)] } ?? []),
        ]
    }

    static func render(_ families: [Family]) -> String {
        var text = ""
        for family in families where !family.samples.isEmpty {
            text += "# TYPE \(family.name) gauge\n"
            if let unit = family.unit { text += "# UNIT \(family.name) \(unit)\n" }
            text += "# HELP \(family.name) \(escapeHelp(family.help))\n"
            for sample in family.samples {
                let labels =
                    sample.labels.isEmpty
                    ? "" : "{" + sample.labels.map { "\($0.0)=\"\(escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
                text += family.name + labels + " " + number(sample.value) + "\n"
            }
        }
        return text + "# EOF\n"
    }

    /// A value as OpenMetrics writes numbers: integers without a fraction, NaN and infinities spelled out.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    static func escapeLabel(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    static func escapeHelp(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }
}

/// A run's results as Markdown (`--summary-md FILE`), for a CI job's page (`$GITHUB_STEP_SUMMARY`):
/// the gate's decision, the display rate, each threshold with its measured value, and the rows per
/// network and per phone.
package enum MarkdownSummary {
    package static func text(bench report: BenchReport) -> String {
        let p = report.percentilesMilliseconds["end_to_end"] ?? [:]
        var lines = [
            "## richpush bench: " + verdict(report.passed),
            "",
            String(
                format: "**%.1f%%** of %d devices would show the attachment (%d attached).", report.displayRate * 100,
                report.devices, report.attached)
                + " End to end: p50 \(ms(p["p50"])), p95 \(ms(p["p95"])), p99 \(ms(p["p99"])).",
            "",
            "Target: `\(code(report.target.url))`, \(report.config.devices) devices, \(report.config.arrival).",
        ]
        lines += thresholds(report.thresholds)
        lines += table(
            "Network", report.networkRows.map { ($0.title, $0.row.devices, $0.row.attached, $0.row.displayRate) })
        lines += table(
            "Phone", report.audienceRows.map { ($0.title, $0.row.devices, $0.row.attached, $0.row.displayRate) })
        return lines.joined(separator: "\n") + "\n"
    }

    package static func text(batch summary: BatchSummary) -> String {
        var lines = [
            "## richpush batch: " + verdict(summary.passed),
            "",
            String(
                format:
                    "**%.1f%%** of %d payloads that asked for an attachment would show it (%d attached, %d in all).",
                summary.displayRate * 100, summary.requested, summary.attached, summary.total),
        ]
        if summary.skipped > 0 {
            lines += ["", "Resumed: \(summary.skipped) result(s) come from an earlier run."]
        }
        lines += thresholds(summary.thresholds ?? [])
        func rows(_ rows: [String: BatchSummary.NetworkRow]?) -> [(String, Int, Int, Double)] {
            (rows ?? [:]).sorted { $0.key < $1.key }.map {
                ($0.key, $0.value.requested, $0.value.attached, $0.value.displayRate)
            }
        }
        lines += table("Network", rows(summary.networks), counting: "payloads")
        lines += table("Phone", rows(summary.audience), counting: "payloads")
        return lines.joined(separator: "\n") + "\n"
    }

    static func verdict(_ passed: Bool?) -> String {
        switch passed {
        case true?: "PASS"
        case false?: "FAIL"
        case nil: "no gate"
        }
    }

    static func ms(_ value: Double?) -> String {
        value.map { String(format: "%.0f ms", $0) } ?? "-"
    }

    /// Text inside a Markdown code span or table cell: backticks and pipes cannot end it.
    static func code(_ text: String) -> String {
        text.replacingOccurrences(of: "`", with: "'").replacingOccurrences(of: "|", with: "\\|")
            .replacingOccurrences(of: "\n", with: " ")
    }

    static func thresholds(_ results: [ThresholdResult]) -> [String] {
        guard !results.isEmpty else { return [] }
        var lines = ["", "| threshold | measured | result |", "|---|---:|---|"]
        for result in results {
            let unit = result.unit.map { $0 == .count ? "" : " " + $0.rawValue } ?? ""
            // A damaged report's count can be near Int64.max: never converted back to an integer.
            let measured = OpenMetrics.number(result.actual) + unit
            lines.append(
                "| `\(code(result.expression ?? result.name))` | \(measured) | \(result.passed ? "PASS" : "**FAIL**") |"
            )
        }
        return lines
    }

    static func table(_ heading: String, _ rows: [(String, Int, Int, Double)], counting: String = "devices")
        -> [String]
    {
        guard !rows.isEmpty else { return [] }
        var lines = ["", "| \(heading.lowercased()) | \(counting) | attached | display |", "|---|---:|---:|---:|"]
        for (name, devices, attached, rate) in rows {
            lines.append("| \(code(name)) | \(devices) | \(attached) | \(String(format: "%.1f%%", rate * 100)) |")
        }
        return lines
    }
}
