import Foundation
import RichPush

/// A self-contained HTML page for a bench report: the verdict in one number, whether the client
/// kept up, the thresholds, four SVG charts (latency percentiles over time, devices per second,
/// devices in flight, the latency distribution) and the tables. No script, no external resource:
/// it opens in any browser, from a file or a CI artifact.
///
/// Every axis starts at 0 and ends at the first round tick (1, 2 or 5 times a power of ten) at or
/// above the data; lines are drawn so none hides another (wider, lighter lines underneath).
package enum HTMLReport {
    static let p50Color = "#2b8a3e", p90Color = "#e67700", p99Color = "#c92a2a"
    static let arrivalsColor = "#1864ab", inFlightColor = "#862e9c"
    static let shownColor = "#8ce99a", failedColor = "#ffa8a8", distributionColor = "#4dabf7"

    package static func render(_ report: BenchReport) -> String {
        let config = report.config
        // A --urls run names its list and how many URLs it holds, not only its first entry.
        let target =
            report.urls.map { urls in
                "\(urls.file ?? report.target.urls ?? "the URL list") (\(urls.entries.count) URL\(urls.entries.count == 1 ? "" : "s"), "
                    + "first \(report.target.url))"
            } ?? report.target.url
        let arrival =
            config.arrival == "ramp"
            ? "ramp over \(format(config.rampSeconds ?? 0)) s"
            : config.arrival == "rate" ? "\(format(config.ratePerSecond ?? 0)) per second" : "burst (all at once)"
        let shards =
            report.shards.count > 1 || config.shardCount > 1
            ? ", shards \(report.shards.map(String.init).joined(separator: ", ")) of \(config.shardCount)" : ""
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>richpush bench: \(escape(target))</title>
            <style>
            body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; padding: 0 12px; max-width: 960px; color: #212529; }
            h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 16px; margin-top: 28px; }
            .big { font-size: 40px; font-weight: 700; } .muted { color: #6c757d; }
            .warn { background: #fff4e6; border-left: 4px solid #e8590c; padding: 8px 12px; }
            .fail { color: #c92a2a; font-weight: 600; } .pass { color: #2b8a3e; font-weight: 600; }
            table { border-collapse: collapse; margin: 8px 0; display: block; max-width: 100%; overflow-x: auto; }
            td, th { padding: 3px 12px 3px 0; text-align: right; }
            td:first-child, th:first-child { text-align: left; } th { border-bottom: 1px solid #ced4da; }
            td.text, th.text { text-align: left; max-width: 560px; }
            .grid { display: flex; gap: 48px; flex-wrap: wrap; } svg { background: #fff; max-width: 100%; height: auto; }
            </style></head><body>
            <h1>richpush bench</h1>
            <div class="muted">\(escape(target)) (type \(escape(report.target.type))), \(config.devices) devices,
            \(arrival), \(config.connections) connections, at most \(config.concurrency) in flight,
            budget \(format(config.budgetSeconds)) s\(shards)</div>
            <p><span class="big">\(format(report.displayRate * 100))%</span> of \(report.devices) devices would show the attachment
            within the budget.</p>
            \(networkSection(report))
            <p class="muted">\(format(report.devicesPerSecond)) devices/s, \(format(report.megabytesPerSecond)) MB/s over
            \(format(report.durationSeconds)) s. \(delayNote(report))</p>
            \(report.startLines.map { "<p class=\"muted\">\(escape($0))</p>" }.joined())
            \(clientSection(report.client))
            \(thresholdSection(report.thresholds))
            <h2>Latency over time</h2>
            \(latencyChart(report))
            <h2>Devices per second</h2>
            \(throughputChart(report))
            <h2>Devices in flight</h2>
            \(inFlightChart(report))
            \(campaignSection(report))
            <h2>Latency distribution</h2>
            \(distributionChart(report))
            <h2>Latency statistics (ms)</h2>
            \(phaseTable(report))
            <p class="muted">dns, connect, tls, first_byte and download are cumulative from the start of each transfer;
            end_to_end runs from the device's scheduled arrival to its verdict. A failed device is left out of the
            phases it never reached (not reached).</p>
            <div class="grid"><div><h2>HTTP status</h2>\(statusTable(report))</div>
            <div><h2>Verdicts</h2>\(countTable(report.verdicts))</div></div>
            <h2>Reasons</h2>
            \(reasonTable(report))
            </body></html>

            """
    }

    // MARK: Sections

    private static func delayNote(_ report: BenchReport) -> String {
        var note =
            report.clientDelayed.devices == 0
            ? "The client's concurrency cap delayed no device."
            : "The client's concurrency cap started \(report.clientDelayed.devices) devices late (up to "
                + "\(format(report.clientDelayed.maxMilliseconds)) ms); their latency still counts from the scheduled arrival."
        if report.notStarted > 0 {
            note += " \(report.notStarted) devices were not run to completion (time limit or interruption)."
        }
        return note
    }

    private static func clientSection(_ client: ClientLoad) -> String {
        let usage =
            "The client used \(format(client.cpuShare * 100))% of its cores (\(format(client.userCpuSeconds)) s user, "
            + "\(format(client.systemCpuSeconds)) s system); devices started late by "
            + "\(format(client.schedulingLagMilliseconds["p99"] ?? 0)) ms at p99, "
            + "\(format(client.schedulingLagMilliseconds["max"] ?? 0)) ms at most."
        guard let warning = client.warning else { return "<p class=\"muted\">\(escape(usage))</p>" }
        return "<p class=\"warn\"><strong>\(escape(warning))</strong><br>\(escape(usage))</p>"
    }

    private static func thresholdSection(_ thresholds: [ThresholdResult]) -> String {
        guard !thresholds.isEmpty else { return "" }
        let items = thresholds.map {
            "<li><span class=\"\($0.passed ? "pass" : "fail")\">\($0.passed ? "PASS" : "FAIL")</span> \(escape($0.message))</li>"
        }
        let passed = thresholds.allSatisfy(\.passed)
        let verdict = "<p>Gate: <span class=\"\(passed ? "pass" : "fail")\">\(passed ? "PASS" : "FAIL")</span></p>"
        return "<h2>Thresholds</h2>\(verdict)<ul>\(items.joined())</ul>"
    }

    private static func phaseTable(_ report: BenchReport) -> String {
        var rows =
            "<table><tr><th>phase</th><th>count</th><th>not reached</th>"
            + BenchSummary.columns.map { "<th>\($0.title.lowercased())</th>" }.joined() + "</tr>\n"
        for phase in BenchReport.phases {
            let p = report.percentilesMilliseconds[phase] ?? [:]
            rows +=
                "<tr><td>\(phase)</td><td>\(report.histograms[phase]?.count ?? 0)</td><td>\(report.notReached[phase] ?? 0)</td>"
            for column in BenchSummary.columns { rows += "<td>\(p[column.key].map(format) ?? "-")</td>" }
            rows += "</tr>\n"
        }
        return rows + "</table>"
    }

    /// The display rate and latency of each network profile, when the run used profiles; then of each
    /// phone, when it had an audience (`--ios-mix`).
    private static func networkSection(_ report: BenchReport) -> String {
        rowSection(report.networkRows, title: "By network", heading: "network")
            + rowSection(report.audienceRows, title: "By iOS version", heading: "phone")
    }

    private static func rowSection(
        _ rows: [(name: String, title: String, row: BenchReport.Network)], title: String, heading: String
    ) -> String {
        guard !rows.isEmpty else { return "" }
        var table =
            "<h2>\(title)</h2><table><tr><th class=\"text\">\(heading)</th><th>devices</th><th>attached</th>"
            + "<th>display rate</th><th>p50 (ms)</th><th>p90 (ms)</th><th>p99 (ms)</th></tr>\n"
        for (_, title, row) in rows {
            let p = row.latencyMilliseconds
            table +=
                "<tr><td class=\"text\">\(escape(title))</td><td>\(row.devices)</td><td>\(row.attached)</td>"
                + "<td>\(format(row.displayRate * 100))%</td>"
                + ["p50", "p90", "p99"].map { "<td>\(p[$0].map(format) ?? "-")</td>" }.joined() + "</tr>\n"
        }
        return table + "</table>"
    }

    private static func statusTable(_ report: BenchReport) -> String {
        var rows = "<table><tr><th>status</th><th>devices</th></tr>"
        for name in ["2xx", "3xx", "4xx", "5xx", "no_response"] {
            rows +=
                "<tr><td>\(name == "no_response" ? "no response" : name)</td><td>\(report.statusClasses[name] ?? 0)</td></tr>"
        }
        for (code, count) in report.statusCodes.sorted(by: { $0.key < $1.key }) {
            rows += "<tr><td>&nbsp;&nbsp;\(escape(code))</td><td>\(count)</td></tr>"
        }
        return rows + "</table>"
    }

    static func countTable(_ counts: [String: Int]) -> String {
        "<table>"
            + counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map {
                "<tr><td>\(escape($0.key))</td><td>\($0.value)</td></tr>"
            }.joined() + "</table>"
    }

    private static func reasonTable(_ report: BenchReport) -> String {
        var rows = "<table><tr><th>reason</th><th>devices</th><th class=\"text\">sample message</th></tr>"
        for (reason, count) in report.reasons.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) {
            let sample = reason == ReasonCode.ok.rawValue ? "" : report.samples[reason] ?? ""
            rows += "<tr><td>\(escape(reason))</td><td>\(count)</td><td class=\"text\">\(escape(sample))</td></tr>"
        }
        return rows + "</table>"
    }

    // MARK: Charts

    /// p50, p90 and p99 per second of completion; p99 widest and lightest at the bottom, p50 thinnest on top.
    private static func latencyChart(_ report: BenchReport) -> String {
        let values = ["p99", "p90", "p50"].map { key in report.timeline.map { $0.latencyMilliseconds[key] } }
        let peak = values.flatMap { $0.compactMap { $0 } }.max() ?? 0
        var frame = TimeFrame(
            title: "End-to-end latency per second of completion (from scheduled arrival)", unit: "ms",
            seconds: report.timeline.count, axis: .fitted(to: peak))
        frame.line(values[0], color: p99Color, width: 6, opacity: 0.45)
        frame.line(values[1], color: p90Color, width: 3.5, opacity: 0.8)
        frame.line(values[2], color: p50Color, width: 1.5, opacity: 1, dots: true)
        return frame.svg(legend: [
            ("p50", p50Color, 1.5), ("p90", p90Color, 3.5), ("p99", p99Color, 6),
        ])
    }

    /// Completions per second as stacked bars (shown, failed), arrivals as a dotted line on top.
    private static func throughputChart(_ report: BenchReport) -> String {
        let shown = report.timeline.map { Double($0.completions - $0.failures) }
        let failed = report.timeline.map { Double($0.failures) }
        let arrivals = report.timeline.map { Double($0.arrivals) }
        let peak = max(zip(shown, failed).map { $0 + $1 }.max() ?? 0, arrivals.max() ?? 0)
        var frame = TimeFrame(
            title: "Arrivals and completions per second", unit: "devices per second", seconds: report.timeline.count,
            axis: .fitted(to: peak, integer: true))
        frame.bars([(shown, shownColor), (failed, failedColor)])
        frame.line(arrivals.map { $0 }, color: arrivalsColor, width: 2, opacity: 1, dots: true, dashed: true)
        return frame.svg(legend: [
            ("arrivals", arrivalsColor, 2), ("completed, attachment shown", shownColor, 10),
            ("completed, failed", failedColor, 10),
        ])
    }

    /// The most devices in flight at once in each second, on its own axis, under the concurrency cap.
    private static func inFlightChart(_ report: BenchReport) -> String {
        let peak = report.timeline.map { Double($0.peakInFlight) }
        let cap = Double(report.config.concurrency * max(1, report.shards.count))
        let capped = (peak.max() ?? 0) >= cap * 0.5
        var frame = TimeFrame(
            title: "Most devices in flight at once, per second", unit: "devices", seconds: report.timeline.count,
            axis: .fitted(to: max(peak.max() ?? 0, capped ? cap : 0), integer: true))
        frame.area(peak, color: inFlightColor)
        // The cap on top, dashed, so it shows even where the devices run right at it.
        if capped { frame.line(peak.map { _ in cap }, color: "#212529", width: 1.5, opacity: 1, dashed: true) }
        let shards = report.shards.count > 1 ? " (\(report.shards.count) shards)" : ""
        return frame.svg(
            legend: [("in flight at once", inFlightColor, 2)]
                + (capped ? [("\(Setting.concurrency) \(report.config.concurrency)\(shards)", "#212529", 1.5)] : []))
    }

    /// A histogram of end-to-end latency, up to p99.9 (the rest counted in the title), with p50 and p99 marked.
    private static func distributionChart(_ report: BenchReport) -> String {
        let histogram = report.histograms["end_to_end"] ?? LatencyHistogram()
        let p = report.percentilesMilliseconds["end_to_end"] ?? [:]
        let reach = max(p["p99_9"] ?? 0, 0.001)
        let xAxis = ChartAxis.fitted(to: reach, ticks: 8)
        let binWidth = ChartAxis.roundStep(atLeast: xAxis.top / 50)
        let binCount = max(1, Int((xAxis.top / binWidth).rounded()))
        var bins = [Double](repeating: 0, count: binCount)
        var beyond: UInt64 = 0
        for bucket in histogram.buckets {
            let range = LatencyHistogram.range(of: LatencyHistogram.index(of: bucket.upperBound))
            let middle = (Double(range.lowerBound) + Double(range.upperBound - range.lowerBound) / 2) / 1000
            // A quotient past the bins (or past Int's range, from a hand-made report) is "beyond".
            let quotient = middle / binWidth
            if quotient.isFinite && quotient >= 0 && quotient < Double(binCount) {
                bins[Int(quotient)] += Double(bucket.count)
            } else {
                beyond &+= bucket.count
            }
        }
        let yAxis = ChartAxis.fitted(to: bins.max() ?? 0, integer: true)
        let width = 900.0, height = 300.0, left = 64.0, right = 20.0, top = 50.0, bottom = 44.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        func x(_ ms: Double) -> Double { left + plotWidth * ms / xAxis.top }
        func y(_ count: Double) -> Double { top + plotHeight * (1 - count / yAxis.top) }
        let title =
            "End-to-end latency: devices per \(xAxis.label(binWidth)) ms"
            + (beyond > 0 ? " (\(beyond) slower devices, above \(xAxis.label(xAxis.top)) ms, not drawn)" : "")
        var svg = header(title: title, width: width, height: height, left: left)
        svg += grid(yAxis, y: y, left: left, right: width - right, unit: "devices", plotMiddle: top + plotHeight / 2)
        for (index, count) in bins.enumerated() where count > 0 {
            let x0 = x(Double(index) * binWidth)
            svg +=
                "<rect x=\"\(n(x0 + 0.5))\" y=\"\(n(y(count)))\" width=\"\(n(max(1, x(binWidth) - left - 1)))\" height=\"\(n(y(0) - y(count)))\" fill=\"\(distributionColor)\"/>"
        }
        for (key, color) in [("p50", p50Color), ("p99", p99Color)] {
            guard let value = p[key], value <= xAxis.top else { continue }
            svg +=
                "<line x1=\"\(n(x(value)))\" x2=\"\(n(x(value)))\" y1=\"\(top)\" y2=\"\(n(y(0)))\" stroke=\"\(color)\" stroke-width=\"2\" stroke-dasharray=\"5 3\"/>"
            // Near the right edge the label goes to the left of its line, so it stays inside the chart.
            let leftward = x(value) > left + plotWidth * 0.8
            svg +=
                "<text x=\"\(n(x(value) + (leftward ? -4 : 4)))\" y=\"\(top + (key == "p99" ? 26 : 12))\" font-size=\"11\" fill=\"\(color)\" text-anchor=\"\(leftward ? "end" : "start")\">\(key) \(format(value)) ms</text>"
        }
        for tick in xAxis.ticks {
            svg +=
                "<text x=\"\(n(x(tick)))\" y=\"\(n(height - bottom + 16))\" font-size=\"11\" text-anchor=\"middle\">\(xAxis.label(tick))</text>"
        }
        svg +=
            "<text x=\"\(left + plotWidth / 2)\" y=\"\(height - 6)\" font-size=\"11\" text-anchor=\"middle\">end-to-end latency, ms</text>"
        return svg + "</svg>"
    }

    // MARK: Drawing

    /// A chart over the seconds of the run: one slot per second on x, a fitted axis on y.
    struct TimeFrame {
        let title: String, unit: String, seconds: Int, axis: ChartAxis
        /// The seconds one slot on x stands for (1: a slot per second; 0.1 for 100 ms buckets).
        var slotSeconds = 1.0
        let width = 900.0, height = 300.0, left = 64.0, right = 20.0, top = 50.0, bottom = 44.0
        var body = ""

        init(title: String, unit: String, seconds: Int, axis: ChartAxis) {
            self.title = title
            self.unit = unit
            self.seconds = max(1, seconds)
            self.axis = axis
        }

        var plotWidth: Double { width - left - right }
        var plotHeight: Double { height - top - bottom }
        func x(_ index: Int) -> Double { left + plotWidth * (Double(index) + 0.5) / Double(seconds) }
        func y(_ value: Double) -> Double { top + plotHeight * (1 - value / axis.top) }

        mutating func line(
            _ values: [Double?], color: String, width: Double, opacity: Double, dots: Bool = false,
            dashed: Bool = false
        ) {
            let points = values.enumerated().compactMap { index, value in value.map { (x(index), y($0)) } }
            guard !points.isEmpty else { return }
            if points.count > 1 {
                body +=
                    "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"\(width)\" stroke-opacity=\"\(opacity)\" stroke-linejoin=\"round\"\(dashed ? " stroke-dasharray=\"6 3\"" : "") points=\"\(points.map { "\(n($0.0)),\(n($0.1))" }.joined(separator: " "))\"/>\n"
            }
            if dots || points.count == 1 {
                let radius = max(2.5, width / 2 + 1)
                for point in points where points.count <= 120 || points.count == 1 {
                    body +=
                        "<circle cx=\"\(n(point.0))\" cy=\"\(n(point.1))\" r=\"\(radius)\" fill=\"\(color)\" fill-opacity=\"\(opacity)\"/>"
                }
            }
        }

        mutating func bars(_ stacks: [([Double], String)]) {
            let barWidth = max(1, plotWidth / Double(seconds) * 0.7)
            for index in 0..<seconds {
                var base = 0.0
                for (values, color) in stacks where values.indices.contains(index) && values[index] > 0 {
                    let value = values[index]
                    body +=
                        "<rect x=\"\(n(x(index) - barWidth / 2))\" y=\"\(n(y(base + value)))\" width=\"\(n(barWidth))\" height=\"\(n(y(base) - y(base + value)))\" fill=\"\(color)\"/>"
                    base += value
                }
            }
        }

        mutating func area(_ values: [Double], color: String) {
            guard !values.isEmpty else { return }
            let points = values.indices.map { "\(n(x($0))),\(n(y(values[$0])))" }
            let floor = n(y(0))
            body +=
                "<polygon fill=\"\(color)\" fill-opacity=\"0.18\" stroke=\"none\" points=\"\(n(x(0))),\(floor) \(points.joined(separator: " ")) \(n(x(values.count - 1))),\(floor)\"/>\n"
            line(values.map { $0 }, color: color, width: 2, opacity: 1, dots: values.count <= 60)
        }

        func svg(legend: [(String, String, Double)]) -> String {
            var svg = HTMLReport.header(title: title, width: width, height: height, left: left)
            svg += HTMLReport.grid(
                axis, y: y, left: left, right: width - right, unit: unit, plotMiddle: top + plotHeight / 2)
            svg += body
            let xAxis = ChartAxis.fitted(to: Double(seconds), ticks: 12, integer: true)
            for tick in xAxis.ticks where Int(tick) < seconds {
                svg +=
                    "<text x=\"\(n(x(Int(tick))))\" y=\"\(n(height - bottom + 16))\" font-size=\"11\" text-anchor=\"middle\">\(slotSeconds == 1 ? String(Int(tick)) : HTMLReport.format(tick * slotSeconds))</text>"
            }
            svg +=
                "<text x=\"\(left + plotWidth / 2)\" y=\"\(height - 6)\" font-size=\"11\" text-anchor=\"middle\">seconds since the start of the run</text>\n"
            var legendX = left
            for (name, color, thickness) in legend {
                let stroke = min(10, max(2, thickness))
                svg +=
                    "<line x1=\"\(n(legendX))\" x2=\"\(n(legendX + 18))\" y1=\"32\" y2=\"32\" stroke=\"\(color)\" stroke-width=\"\(stroke)\"/>"
                svg += "<text x=\"\(n(legendX + 24))\" y=\"36\" font-size=\"11\">\(HTMLReport.escape(name))</text>"
                legendX += Double(name.count) * 6.5 + 44
            }
            return svg + "</svg>"
        }
    }

    static func header(title: String, width: Double, height: Double, left: Double) -> String {
        """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(Int(width)) \(Int(height))" width="\(Int(width))" height="\(Int(height))" role="img" aria-label="\(escape(title))">
        <text x="\(left)" y="16" font-size="13" font-weight="600">\(escape(title))</text>

        """
    }

    /// Horizontal grid lines and labels at the axis's round ticks, and the unit along the y axis.
    static func grid(
        _ axis: ChartAxis, y: (Double) -> Double, left: Double, right: Double, unit: String, plotMiddle: Double
    ) -> String {
        var svg = ""
        for tick in axis.ticks {
            svg +=
                "<line x1=\"\(left)\" x2=\"\(right)\" y1=\"\(n(y(tick)))\" y2=\"\(n(y(tick)))\" stroke=\"\(tick == 0 ? "#adb5bd" : "#e9ecef")\"/>"
            svg +=
                "<text x=\"\(left - 6)\" y=\"\(n(y(tick) + 4))\" font-size=\"11\" text-anchor=\"end\">\(axis.label(tick))</text>\n"
        }
        svg +=
            "<text x=\"14\" y=\"\(n(plotMiddle))\" font-size=\"11\" transform=\"rotate(-90 14 \(n(plotMiddle)))\" text-anchor=\"middle\">\(escape(unit))</text>\n"
        return svg
    }

    /// A coordinate with two decimals at most.
    static func n(_ value: Double) -> String { String(format: "%.2f", value) }

    static func format(_ value: Double) -> String {
        value >= 100 || value == value.rounded() ? String(format: "%.0f", value) : String(format: "%.1f", value)
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
