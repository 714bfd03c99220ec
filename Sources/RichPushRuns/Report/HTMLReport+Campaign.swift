import RichPush

/// The campaign parts of the HTML report: the burst timeline at its own resolution (in flight, new
/// connections, bytes per second, cache hits and misses, the hit ratio), the caches' table with the
/// latency of hits and misses apart, the HTTP versions and the URL breakdown.
extension HTMLReport {
    static let hitColor = "#2b8a3e", missColor = "#e8590c", bytesColor = "#1864ab", connectionsColor = "#5f3dc4"

    static func campaignSection(_ report: BenchReport) -> String {
        var html = ""
        if let burst = report.burstTimeline, !burst.buckets.isEmpty { html += burstCharts(burst) }
        if let cache = report.cache, report.devices > 0 { html += cacheTable(cache) }
        if let versions = report.httpVersions, !versions.isEmpty {
            html +=
                "<h2>HTTP versions</h2>" + countTable(versions.reduce(into: [:]) { $0["HTTP/" + $1.key] = $1.value })
        }
        if let urls = report.urls { html += urlSection(urls) }
        return html
    }

    private static func burstCharts(_ burst: BurstTimeline) -> String {
        let count = burst.buckets.count
        let slot = Double(burst.bucketMilliseconds) / 1000
        let unit = "\(burst.bucketMilliseconds) ms buckets"
        func frame(_ title: String, _ unitName: String, peak: Double, integer: Bool = false) -> TimeFrame {
            var frame = TimeFrame(
                title: title, unit: unitName, seconds: count, axis: .fitted(to: peak, integer: integer))
            frame.slotSeconds = slot
            return frame
        }
        let inFlight = burst.buckets.map { Double($0.inFlight) }
        var flight = frame("Devices in flight (\(unit))", "devices", peak: inFlight.max() ?? 0, integer: true)
        flight.area(inFlight, color: inFlightColor)
        let connections = burst.buckets.map(\.newConnectionsPerSecond)
        var opened = frame(
            "New connections per second (\(unit)); peak \(format(burst.peakNewConnectionsPerSecond))/s",
            "connections per second", peak: connections.max() ?? 0)
        opened.area(connections, color: connectionsColor)
        let megabytes = burst.buckets.map { $0.bytesPerSecond / 1_000_000 }
        var bytes = frame(
            "MB per second (\(unit), counted as devices finish); peak \(format(burst.peakBytesPerSecond / 1_000_000)) MB/s",
            "MB per second", peak: megabytes.max() ?? 0)
        bytes.area(megabytes, color: bytesColor)
        let hits = burst.buckets.map { Double($0.hits) }
        let misses = burst.buckets.map { Double($0.misses) }
        var cached = frame(
            "Cache hits and misses per bucket (\(unit))", "devices", peak: zip(hits, misses).map { $0 + $1 }.max() ?? 0,
            integer: true)
        cached.bars([(hits, hitColor), (misses, missColor)])
        var ratio = frame("Hit ratio per bucket (\(unit))", "% of hits and misses", peak: 100)
        ratio.line(
            zip(hits, misses).map { $0 + $1 > 0 ? 100 * $0 / ($0 + $1) : nil }, color: hitColor, width: 2, opacity: 1,
            dots: true)
        return "<h2>Burst timeline</h2>" + flight.svg(legend: [("in flight", inFlightColor, 2)])
            + opened.svg(legend: [("new connections/s", connectionsColor, 2)])
            + bytes.svg(legend: [("MB/s", bytesColor, 2)])
            + cached.svg(legend: [("hits", hitColor, 10), ("misses", missColor, 10)])
            + (hits.contains { $0 > 0 } || misses.contains { $0 > 0 }
                ? ratio.svg(legend: [("hit ratio", hitColor, 2)]) : "")
    }

    private static func cacheTable(_ cache: CacheSummary) -> String {
        guard cache.sawCache else {
            return "<h2>Cache</h2><p class=\"muted\">No response carried a cache header (Cache-Status, "
                + "CF-Cache-Status, X-Cache, Age).</p>"
        }
        var html =
            "<h2>Cache</h2><p><span class=\"big\">\(format(cache.hitRatio * 100))%</span> hit ratio "
            + "(hits against hits and misses).</p>"
        html += "<table><tr><th>result</th><th>devices</th><th>p50 (ms)</th><th>p90 (ms)</th><th>p99 (ms)</th></tr>"
        for result in CacheResult.allCases {
            let p: [String: Double] =
                result == .hit ? cache.hitLatencyMilliseconds : result == .miss ? cache.missLatencyMilliseconds : [:]
            html +=
                "<tr><td>\(result.rawValue)</td><td>\(cache.results[result.rawValue] ?? 0)</td>"
                + ["p50", "p90", "p99"].map { "<td>\(p[$0].map(format) ?? "-")</td>" }.joined() + "</tr>"
        }
        return html + "</table><p class=\"muted\">Latency is end to end, from each device's scheduled arrival.</p>"
    }

    private static func urlSection(_ urls: URLBreakdown) -> String {
        let rows = urls.orderedRows
        if !rows.isEmpty {
            var html =
                "<h2>By URL</h2><table><tr><th class=\"text\">URL or template</th><th>devices</th><th>display rate</th>"
                + "<th>hit ratio</th><th>p50 (ms)</th><th>p99 (ms)</th></tr>"
            for (entry, row) in rows {
                let p = row.latencyMilliseconds
                html +=
                    "<tr><td class=\"text\">\(escape(entry))</td><td>\(row.devices)</td>"
                    + "<td>\(format(row.displayRate * 100))%</td>"
                    + "<td>\(row.hits == 0 && row.misses == 0 ? "-" : format(row.hitRatio * 100) + "%")</td>"
                    + ["p50", "p99"].map { "<td>\(p[$0].map(format) ?? "-")</td>" }.joined() + "</tr>"
            }
            return html + "</table>"
        }
        guard !urls.entries.isEmpty else { return "" }
        return "<h2>By URL</h2><p>" + escape(BenchSummary.urlLines(urls).last ?? "") + "</p>"
    }
}
