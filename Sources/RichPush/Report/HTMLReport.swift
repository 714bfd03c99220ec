import Foundation

/// A self-contained HTML page for a bench report: summary tables and two SVG charts (latency
/// percentiles over time, throughput and in-flight devices over time). No script, no external
/// resource: it opens in any browser, from a file or a CI artifact.
public enum HTMLReport {
    public static func render(_ report: BenchReport) -> String {
        let seconds = report.timeline.map { String($0.second) }
        let latency = lineChart(
            title: "End-to-end latency per second of completion (from scheduled arrival)", unit: "ms",
            labels: seconds,
            series: [
                ("p50", "#2b8a3e", report.timeline.map { $0.latencyMilliseconds["p50"] }),
                ("p90", "#e67700", report.timeline.map { $0.latencyMilliseconds["p90"] }),
                ("p99", "#c92a2a", report.timeline.map { $0.latencyMilliseconds["p99"] }),
            ], bars: [])
        let throughput = lineChart(
            title: "Devices per second", unit: "devices", labels: seconds,
            series: [
                ("arrivals", "#1971c2", report.timeline.map { Double($0.arrivals) }),
                ("in flight", "#862e9c", report.timeline.map { Double($0.inFlight) }),
            ],
            bars: [
                ("attachment shown", "#8ce99a", report.timeline.map { Double($0.completions - $0.failures) }),
                ("failed", "#ffa8a8", report.timeline.map { Double($0.failures) }),
            ])
        var phases = ""
        for phase in BenchReport.phases {
            let p = report.percentilesMilliseconds[phase] ?? [:]
            let n = report.histograms[phase]?.count ?? 0
            phases += "<tr><td>\(phase)</td><td>\(n)</td>"
            for key in ["p50", "p90", "p99", "p99_9", "max"] { phases += "<td>\(format(p[key] ?? 0))</td>" }
            phases += "</tr>\n"
        }
        let verdicts = report.verdicts.sorted { $0.value > $1.value }.map {
            "<tr><td>\(escape($0.key))</td><td>\($0.value)</td></tr>"
        }.joined(separator: "\n")
        let reasons = report.reasons.sorted { $0.value > $1.value }.map {
            "<tr><td>\(escape($0.key))</td><td>\($0.value)</td></tr>"
        }.joined(separator: "\n")
        let config = report.config
        let arrival =
            config.arrival == "ramp"
            ? "ramp over \(format(config.rampSeconds ?? 0)) s"
            : config.arrival == "rate" ? "\(format(config.ratePerSecond ?? 0)) per second" : "burst (all at once)"
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>richpush bench: \(escape(report.target.url))</title>
            <style>
            body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 960px; color: #212529; }
            h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 16px; margin-top: 28px; }
            .big { font-size: 40px; font-weight: 700; } .muted { color: #6c757d; }
            table { border-collapse: collapse; margin: 8px 0; } td, th { padding: 3px 12px 3px 0; text-align: right; }
            td:first-child, th:first-child { text-align: left; } th { border-bottom: 1px solid #ced4da; }
            .grid { display: flex; gap: 48px; flex-wrap: wrap; } svg { background: #fff; }
            </style></head><body>
            <h1>richpush bench</h1>
            <div class="muted">\(escape(report.target.url)) (type \(escape(report.target.type))), \(config.devices) devices,
            \(arrival), \(config.connections) connections, at most \(config.concurrency) in flight,
            budget \(format(config.budgetSeconds)) s\(report.shards.count > 1 || config.shardCount > 1 ? ", shards \(report.shards.map(String.init).joined(separator: ", ")) of \(config.shardCount)" : "")</div>
            <p><span class="big">\(format(report.displayRate * 100))%</span> of \(report.devices) devices would show the attachment
            within the budget.</p>
            <p class="muted">\(format(report.devicesPerSecond)) devices/s, \(format(report.megabytesPerSecond)) MB/s over
            \(format(report.durationSeconds)) s. \(report.clientDelayed.devices == 0 ? "The client's concurrency cap delayed no device." : "The client's concurrency cap started \(report.clientDelayed.devices) devices late (up to \(format(report.clientDelayed.maxMilliseconds)) ms); their latency still counts from the scheduled arrival.")\(report.notStarted > 0 ? " \(report.notStarted) devices were not started before the time limit." : "")</p>
            <h2>Latency over time</h2>
            \(latency)
            <h2>Throughput over time</h2>
            \(throughput)
            <h2>Latency percentiles (ms)</h2>
            <table><tr><th>phase</th><th>count</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>
            \(phases)</table>
            <p class="muted">dns, connect, tls, first_byte and download are cumulative from the start of each transfer;
            end_to_end runs from the device's scheduled arrival to its verdict.</p>
            <div class="grid"><div><h2>Verdicts</h2><table>\(verdicts)</table></div>
            <div><h2>Reasons</h2><table>\(reasons)</table></div></div>
            </body></html>

            """
    }

    /// An SVG chart: optional stacked bars, then lines, over one x label per point.
    static func lineChart(
        title: String, unit: String, labels: [String], series: [(String, String, [Double?])],
        bars: [(String, String, [Double])]
    ) -> String {
        let width = 900.0, height = 320.0, left = 60.0, right = 20.0, top = 50.0, bottom = 40.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let count = max(1, labels.count)
        let stacked = (0..<labels.count).map { index in
            bars.reduce(0.0) { $0 + ($1.2.indices.contains(index) ? $1.2[index] : 0) }
        }
        let peak = max(
            1, (series.flatMap { $0.2.compactMap { $0 } } + stacked).max() ?? 1)
        let top10 = niceCeiling(peak)
        func x(_ index: Int) -> Double { left + plotWidth * (Double(index) + 0.5) / Double(count) }
        func y(_ value: Double) -> Double { top + plotHeight * (1 - value / top10) }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" role="img" aria-label="\(escape(title))">
            <text x="\(left)" y="18" font-size="13" font-weight="600">\(escape(title))</text>

            """
        for step in 0...4 {
            let value = top10 * Double(step) / 4
            svg +=
                "<line x1=\"\(left)\" x2=\"\(width - right)\" y1=\"\(y(value))\" y2=\"\(y(value))\" stroke=\"#e9ecef\"/>"
            svg +=
                "<text x=\"\(left - 6)\" y=\"\(y(value) + 4)\" font-size=\"11\" text-anchor=\"end\">\(format(value))</text>\n"
        }
        svg +=
            "<text x=\"14\" y=\"\(top + plotHeight / 2)\" font-size=\"11\" transform=\"rotate(-90 14 \(top + plotHeight / 2))\" text-anchor=\"middle\">\(escape(unit))</text>\n"
        let barWidth = max(1, plotWidth / Double(count) * 0.7)
        for index in 0..<labels.count {
            var base = 0.0
            for (_, color, values) in bars where values.indices.contains(index) && values[index] > 0 {
                let value = values[index]
                svg +=
                    "<rect x=\"\(x(index) - barWidth / 2)\" y=\"\(y(base + value))\" width=\"\(barWidth)\" height=\"\(y(base) - y(base + value))\" fill=\"\(color)\"/>"
                base += value
            }
        }
        for (_, color, values) in series {
            let points = values.enumerated().compactMap { index, value in value.map { "\(x(index)),\(y($0))" } }
            guard !points.isEmpty else { continue }
            svg +=
                "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\"\(points.joined(separator: " "))\"/>\n"
            if points.count == 1, let point = points.first {
                let parts = point.split(separator: ",")
                svg += "<circle cx=\"\(parts[0])\" cy=\"\(parts[1])\" r=\"3\" fill=\"\(color)\"/>"
            }
        }
        let labelStep = max(1, labels.count / 15)
        for index in stride(from: 0, to: labels.count, by: labelStep) {
            svg +=
                "<text x=\"\(x(index))\" y=\"\(height - bottom + 16)\" font-size=\"11\" text-anchor=\"middle\">\(escape(labels[index]))</text>"
        }
        svg +=
            "<text x=\"\(left + plotWidth / 2)\" y=\"\(height - 6)\" font-size=\"11\" text-anchor=\"middle\">seconds since the start of the run</text>\n"
        var legendX = left
        for (name, color, _) in series.map({ ($0.0, $0.1, 0) }) + bars.map({ ($0.0, $0.1, 0) }) {
            svg += "<rect x=\"\(legendX)\" y=\"26\" width=\"12\" height=\"12\" fill=\"\(color)\"/>"
            svg += "<text x=\"\(legendX + 16)\" y=\"36\" font-size=\"11\">\(escape(name))</text>"
            legendX += Double(name.count) * 7 + 34
        }
        return svg + "</svg>"
    }

    private static func niceCeiling(_ value: Double) -> Double {
        let magnitude = pow(10, floor(log10(value)))
        for factor in [1.0, 2, 2.5, 5, 10] where factor * magnitude >= value { return factor * magnitude }
        return 10 * magnitude
    }

    private static func format(_ value: Double) -> String {
        value >= 100 || value == value.rounded() ? String(format: "%.0f", value) : String(format: "%.1f", value)
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
