import RichPush

/// A bench's results by entry of its URL list (``URLList``): a row per URL or template when there
/// are few, and the spread over the entries when there are many.
///
/// Up to ``maxRows`` entries, each has a row keyed by its text (a template's row counts every URL it
/// expanded to): devices, attached, cache hits and misses, and end-to-end latency. Above that, the
/// report keeps per-entry counts (devices, attached, hits, in the list's order) and derives the
/// spread from them: devices per entry and display rate per entry at their lowest, median and highest,
/// and the entries that displayed least. Both merge exactly across shards.
package struct URLBreakdown: Sendable, Codable, Equatable {
    /// One entry's devices.
    package struct Row: Sendable, Codable, Equatable {
        package var devices = 0
        package var attached = 0
        package var hits = 0
        package var misses = 0
        package var latency = LatencyHistogram()
        /// Derived: `attached / devices`.
        package var displayRate = 0.0
        /// Derived: hits / (hits + misses).
        package var hitRatio = 0.0
        /// Derived: the statistics of `latency`, in milliseconds.
        package var latencyMilliseconds: [String: Double] = [:]

        package init() {}

        mutating func add(_ device: DeviceResult) {
            devices += 1
            if device.verdict == .attached { attached += 1 }
            if device.cache == .hit { hits += 1 }
            if device.cache == .miss { misses += 1 }
            latency.record(device.ended - device.scheduled)
        }

        mutating func merge(_ other: Row, _ field: String) throws(ReportDamage) {
            try ReportDamage.add(&devices, other.devices, field + ".devices")
            try ReportDamage.add(&attached, other.attached, field + ".attached")
            try ReportDamage.add(&hits, other.hits, field + ".hits")
            try ReportDamage.add(&misses, other.misses, field + ".misses")
            try latency.merge(other.latency)
        }

        func check(_ field: String) throws(ReportDamage) {
            for (value, name) in [(devices, "devices"), (attached, "attached"), (hits, "hits"), (misses, "misses")] {
                _ = try ReportDamage.nonNegative(value, "\(field).\(name)")
            }
        }

        mutating func finalize() {
            displayRate = Rounding.share(devices == 0 ? 0 : Double(attached) / Double(devices))
            let answered = Double(hits) + Double(misses)
            hitRatio = Rounding.share(answered == 0 ? 0 : Double(hits) / answered)
            latencyMilliseconds = latency.percentilesMilliseconds
        }
    }

    /// The spread over many entries (derived).
    package struct Spread: Sendable, Codable, Equatable {
        /// Devices per entry: lowest, median, highest.
        package var devicesPerEntry: [String: Int] = [:]
        /// Display rate per entry (entries with devices): lowest, median, highest.
        package var displayRatePerEntry: [String: Double] = [:]
        /// Entries no device requested.
        package var unused = 0
        /// The (up to 5) entries with devices that displayed least, worst first, as written.
        package var worst: [String] = []
    }

    /// The most entries with a row each.
    package static let maxRows = 20

    /// The `--urls` file, nil for one `--url`.
    package var file: String?
    /// The entries as written, in the list's order.
    package var entries: [String]
    /// Entry text -> its row, when there are at most ``maxRows`` entries.
    package var rows: [String: Row]?
    /// Per entry, in order, when there are more: devices, attached, hits.
    package var entryDevices: [Int]?
    package var entryAttached: [Int]?
    package var entryHits: [Int]?
    /// Derived from the per-entry counts.
    package var spread: Spread?

    package init(_ list: URLList) {
        file = list.file
        // As written, without a URL's user name or password (URLCredentials).
        entries = list.entries.map { URLCredentials.stripped($0.template.text) }
        if entries.count <= Self.maxRows {
            rows = [:]
        } else {
            entryDevices = Array(repeating: 0, count: entries.count)
            entryAttached = entryDevices
            entryHits = entryDevices
        }
    }

    mutating func add(_ device: DeviceResult) {
        guard entries.indices.contains(device.entry) else { return }
        if rows != nil {
            rows?[entries[device.entry], default: Row()].add(device)
        } else {
            entryDevices?[device.entry] += 1
            if device.verdict == .attached { entryAttached?[device.entry] += 1 }
            if device.cache == .hit { entryHits?[device.entry] += 1 }
        }
    }

    mutating func merge(_ other: URLBreakdown) throws(ReportDamage) {
        guard other.entries == entries else {
            throw ReportDamage("urls.entries differ: the reports come from other lists")
        }
        if let theirs = other.rows {
            var mine = rows ?? [:]
            for (name, row) in theirs { try mine[name, default: Row()].merge(row, "urls.rows") }
            rows = mine
        }
        func add(_ mine: inout [Int]?, _ theirs: [Int]?, _ field: String) throws(ReportDamage) {
            guard let theirs else { return }
            var sums = mine ?? Array(repeating: 0, count: theirs.count)
            guard sums.count == theirs.count else { throw ReportDamage("\(field) have different lengths") }
            for index in sums.indices { try ReportDamage.add(&sums[index], theirs[index], field) }
            mine = sums
        }
        try add(&entryDevices, other.entryDevices, "urls.entry_devices")
        try add(&entryAttached, other.entryAttached, "urls.entry_attached")
        try add(&entryHits, other.entryHits, "urls.entry_hits")
    }

    func check() throws(ReportDamage) {
        guard entries.count <= URLList.maxEntries else {
            throw ReportDamage("urls.entries holds \(entries.count) entries, more than \(URLList.maxEntries)")
        }
        for row in (rows ?? [:]).values { try row.check("urls.rows") }
        for (counts, field) in [
            (entryDevices, "urls.entry_devices"), (entryAttached, "urls.entry_attached"),
            (entryHits, "urls.entry_hits"),
        ] {
            guard let counts else { continue }
            guard counts.count == entries.count else {
                throw ReportDamage("\(field) has \(counts.count) counts for \(entries.count) entries")
            }
            for value in counts { _ = try ReportDamage.nonNegative(value, field) }
        }
    }

    mutating func finalize() {
        if var all = rows {
            for name in all.keys { all[name]?.finalize() }
            rows = all
        }
        guard let devices = entryDevices, let attached = entryAttached, !devices.isEmpty else {
            spread = nil
            return
        }
        var result = Spread()
        let sorted = devices.sorted()
        result.devicesPerEntry = ["min": sorted[0], "p50": sorted[sorted.count / 2], "max": sorted[sorted.count - 1]]
        let used = devices.indices.filter { devices[$0] > 0 }
        result.unused = devices.count - used.count
        let rates = used.map { (index: $0, rate: Double(attached[$0]) / Double(devices[$0])) }
        let byRate = rates.sorted { ($0.rate, $0.index) < ($1.rate, $1.index) }
        if let first = byRate.first, let last = byRate.last {
            result.displayRatePerEntry = [
                "min": Rounding.share(first.rate), "p50": Rounding.share(byRate[byRate.count / 2].rate),
                "max": Rounding.share(last.rate),
            ]
        }
        result.worst = byRate.prefix(5).filter { $0.rate < 1 }.map { entries[$0.index] }
        spread = result
    }

    /// Rows in the list's order.
    package var orderedRows: [(entry: String, row: Row)] {
        guard let rows else { return [] }
        var seen = Set<String>()
        return entries.compactMap { entry in
            guard seen.insert(entry).inserted, let row = rows[entry] else { return nil }
            return (entry, row)
        }
    }
}
