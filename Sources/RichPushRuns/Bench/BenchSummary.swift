import Foundation
import RichPush

/// The text report of a bench, for a terminal or a CI log: the display rate, throughput, whether
/// the client kept up, latency statistics per phase, status codes, verdicts, reasons with a sample
/// message each, and the thresholds.
package enum BenchSummary {
    /// The statistics columns of the phase table, in order, with their keys in `percentiles_milliseconds`.
    package static let columns: [(title: String, key: String)] = [
        ("MIN", "min"), ("MEAN", "mean"), ("STDEV", "stdev"), ("P50", "p50"), ("P90", "p90"), ("P95", "p95"),
        ("P99", "p99"), ("P99.9", "p99_9"), ("MAX", "max"),
    ]

    /// The SDK's own calls beside the CDN: how many, their rate, their latency, how many failed.
    static func sdkCallLines(_ report: BenchReport) -> [String] {
        report.histograms.keys.filter { $0.hasPrefix("sdk_call:") }.sorted().compactMap { key in
            guard let histogram = report.histograms[key], histogram.count > 0 else { return nil }
            let name = String(key.dropFirst("sdk_call:".count))
            let failed = report.histograms["sdk_call_failed:" + name]?.count ?? 0
            let p = histogram.percentilesMilliseconds
            let rate = report.durationSeconds > 0 ? Double(histogram.count) / report.durationSeconds : 0
            return "SDK call \(name): \(histogram.count) sent, \(failed) without a 2xx answer, "
                + String(
                    format: "%.1f/s; latency p50 %.1f ms, p99 %.1f ms.", rate, p["p50"] ?? 0, p["p99"] ?? 0)
        }
    }

    package static func text(_ report: BenchReport) -> String {
        var lines: [String] = []
        lines.append(
            String(
                format: "Display rate: %.1f%% of %d devices would show the attachment (%d attached).",
                report.displayRate * 100, report.devices, report.attached))
        lines += report.startLines
        lines += networkLines(report)
        lines.append(
            String(
                format: "Throughput: %.0f devices/s, %.1f MB/s over %.1f s.", report.devicesPerSecond,
                report.megabytesPerSecond, report.durationSeconds))
        lines += sdkCallLines(report)
        let client = report.client
        lines.append(
            String(
                format: "Client: %.0f%% CPU of its cores (%.1f s user, %.1f s system); devices started late by %.1f ms "
                    + "at p99, %.1f ms at most.",
                client.cpuShare * 100, client.userCpuSeconds, client.systemCpuSeconds,
                client.schedulingLagMilliseconds["p99"] ?? 0, client.schedulingLagMilliseconds["max"] ?? 0))
        if let warning = client.warning { lines.append(warning) }
        if report.clientDelayed.devices > 0 {
            lines.append(
                String(
                    format:
                        "Client-delayed: %d devices started late because of \(Setting.concurrency) (up to %.0f ms); their latency counts from the scheduled arrival.",
                    report.clientDelayed.devices, report.clientDelayed.maxMilliseconds))
        }
        var table = TextTable(
            ["PHASE (ms)", "COUNT", "NOT REACHED"] + columns.map(\.title), rightAligned: Set(1...(columns.count + 2)))
        for phase in BenchReport.phases {
            let p = report.percentilesMilliseconds[phase] ?? [:]
            table.append(
                [phase, String(report.histograms[phase]?.count ?? 0), String(report.notReached[phase] ?? 0)]
                    + columns.map { p[$0.key].map { String(format: "%.1f", $0) } ?? "-" })
        }
        lines += ["", table.rendered]
        lines.append(
            "Phases are cumulative from the start of each transfer; a failed device is left out of the phases it "
                + "never reached (NOT REACHED).")
        lines.append("")
        var statuses = TextTable(["HTTP STATUS", "COUNT"], rightAligned: [1])
        for name in ["2xx", "3xx", "4xx", "5xx", "no_response"] {
            statuses.append([name, String(report.statusClasses[name] ?? 0)])
        }
        for (code, count) in report.statusCodes.sorted(by: { $0.key < $1.key }) {
            statuses.append(["  " + code, String(count)])
        }
        var verdicts = TextTable(["VERDICT", "COUNT"], rightAligned: [1])
        for (verdict, count) in report.verdicts.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) {
            verdicts.append([verdict, String(count)])
        }
        var reasons = TextTable(["REASON", "COUNT", "SAMPLE MESSAGE"], rightAligned: [1])
        for (reason, count) in report.reasons.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) {
            let sample = reason == ReasonCode.ok.rawValue ? "" : report.samples[reason] ?? ""
            reasons.append([reason, String(count), sample.escapingControlCharacters])
        }
        lines += [statuses.rendered, "", verdicts.rendered, "", reasons.rendered]
        lines += campaignLines(report)
        if let views = report.contentExtensions, !views.isEmpty {
            lines.append(
                "Content extensions: "
                    + views.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ") + ".")
        }
        if !report.thresholds.isEmpty {
            lines.append("")
            lines += GateDecision(report).lines
        }
        return lines.joined(separator: "\n")
    }

    /// The HTTP versions, the caches' part, the burst's peaks and the URL breakdown.
    static func campaignLines(_ report: BenchReport) -> [String] {
        var lines: [String] = []
        if let versions = report.httpVersions, !versions.isEmpty {
            lines.append(
                "HTTP versions: "
                    + versions.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "HTTP/\($0.key) \($0.value)" }
                    .joined(separator: ", ") + ".")
        }
        if let cache = report.cache, report.devices > 0 {
            lines.append(cacheLine(cache))
        }
        if let burst = report.burstTimeline, !burst.buckets.isEmpty {
            lines.append(
                String(
                    format: "Burst (%d ms buckets): at peak %d devices in flight, %.0f new connections/s, %.1f MB/s.",
                    burst.bucketMilliseconds, burst.peakInFlight, burst.peakNewConnectionsPerSecond,
                    burst.peakBytesPerSecond / 1_000_000))
        }
        if let urls = report.urls { lines += urlLines(urls) }
        return lines.isEmpty ? [] : [""] + lines
    }

    /// The cache line: the hit ratio and the latency of hits and misses apart.
    static func cacheLine(_ cache: CacheSummary) -> String {
        guard cache.sawCache else {
            return "Cache: no response carried a cache header (Cache-Status, CF-Cache-Status, X-Cache, Age)."
        }
        func latency(_ p: [String: Double]) -> String {
            ["p50", "p90", "p99"].map { key in p[key].map { String(format: "%.1f", $0) } ?? "-" }.joined(separator: "/")
        }
        let results = cache.results
        return String(
            format: "Cache: %.1f%% hit ratio (%d hits, %d misses, %d bypassed, %d without cache headers); end-to-end "
                + "p50/p90/p99: hits %@ ms, misses %@ ms.",
            cache.hitRatio * 100, cache.hits, cache.misses, results[CacheResult.bypass.rawValue] ?? 0,
            results[CacheResult.none.rawValue] ?? 0, latency(cache.hitLatencyMilliseconds),
            latency(cache.missLatencyMilliseconds))
    }

    /// A row per URL when there are few, the spread when there are many.
    static func urlLines(_ urls: URLBreakdown) -> [String] {
        let rows = urls.orderedRows
        if !rows.isEmpty {
            var table = TextTable(
                ["URL", "DEVICES", "DISPLAY", "HIT RATIO", "P50 (ms)", "P99 (ms)"], rightAligned: Set(1...5))
            for (entry, row) in rows {
                let p = row.latencyMilliseconds
                table.append(
                    [
                        entry.escapingControlCharacters, String(row.devices),
                        String(format: "%.1f%%", row.displayRate * 100),
                        row.hits == 0 && row.misses == 0 ? "-" : String(format: "%.1f%%", row.hitRatio * 100),
                    ] + ["p50", "p99"].map { key in p[key].map { String(format: "%.1f", $0) } ?? "-" })
            }
            return ["", table.rendered]
        }
        guard let spread = urls.spread else { return [] }
        let devices = spread.devicesPerEntry
        let rates = spread.displayRatePerEntry
        var line = String(
            format: "URLs: %d entries; devices per entry %d/%d/%d (min/median/max), %d never requested",
            urls.entries.count, devices["min"] ?? 0, devices["p50"] ?? 0, devices["max"] ?? 0, spread.unused)
        if !rates.isEmpty {
            line += String(
                format: "; display rate per entry %.1f%%/%.1f%%/%.1f%%", (rates["min"] ?? 0) * 100,
                (rates["p50"] ?? 0) * 100, (rates["max"] ?? 0) * 100)
        }
        line += "."
        if !spread.worst.isEmpty {
            line += " Least displayed: " + spread.worst.map(\.escapingControlCharacters).joined(separator: ", ") + "."
        }
        return ["", line]
    }

    /// The per-network table (display rate and end-to-end latency), when the run used profiles; then
    /// the per-phone one, when it had an audience.
    static func networkLines(_ report: BenchReport) -> [String] {
        rowLines(report.networkRows, heading: "NETWORK") + rowLines(report.audienceRows, heading: "PHONE")
    }

    /// One table of rows (networks or phones).
    static func rowLines(_ rows: [(name: String, title: String, row: BenchReport.Network)], heading: String)
        -> [String]
    {
        guard !rows.isEmpty else { return [] }
        var table = TextTable(
            [heading, "DEVICES", "ATTACHED", "DISPLAY", "P50 (ms)", "P90 (ms)", "P99 (ms)"], rightAligned: Set(1...6))
        for (_, title, row) in rows {
            let p = row.latencyMilliseconds
            table.append(
                [title, String(row.devices), String(row.attached), String(format: "%.1f%%", row.displayRate * 100)]
                    + ["p50", "p90", "p99"].map { key in p[key].map { String(format: "%.1f", $0) } ?? "-" })
        }
        return ["", table.rendered, ""]
    }
}
