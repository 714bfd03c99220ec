import Foundation

/// The asset URLs a bench's devices request: one URL or template (`--url`), or a list read from a
/// file (`--urls`), each entry with a weight.
///
/// The file has one entry a line: a URL (or a ``URLTemplate``), then optionally whitespace and a
/// weight, a whole number from 1 to 1,000,000 (default 1). Blank lines and lines starting with `#`
/// are skipped. Device `i` of the whole run requests entry ``entry(of:)``: entries get shares of the
/// devices in proportion to their weights, spread over the schedule (not one entry after another), the
/// same on every shard and in every run with the same seed.
///
/// ```text
/// # hero image, two variants, 3:1
/// https://cdn.example.com/campaign/hero-a.jpg 3
/// https://cdn.example.com/campaign/hero-b.jpg?u={device}
/// ```
public struct URLList: Sendable, Equatable {
    /// One line of the list.
    public struct Entry: Sendable, Equatable {
        /// The entry as written (the report's row key).
        public var template: URLTemplate
        public var weight: Int
        /// The line it was read from (1-based; 0 for `--url`).
        public var line: Int

        public init(template: URLTemplate, weight: Int, line: Int) {
            self.template = template
            self.weight = weight
            self.line = line
        }
    }

    public private(set) var entries: [Entry]
    /// The file it was read from, nil for `--url`.
    public let file: String?
    /// Running sums of the weights: entry `k` takes the draws below `cumulative[k]`.
    private let cumulative: [UInt64]
    private let offset: Double

    /// The most entries a list may hold.
    public static let maxEntries = 100_000
    /// The most weight an entry may have.
    public static let maxWeight = 1_000_000

    /// One entry: every device requests `url` (a template or a plain URL).
    public init(single url: String, seed: UInt64 = 1) throws(ConfigurationError) {
        try self.init(entries: [Entry(template: URLTemplate(url), weight: 1, line: 0)], file: nil, seed: seed)
    }

    /// The entries of a list; `seed` moves where the spread starts.
    public init(entries: [Entry], file: String?, seed: UInt64 = 1) throws(ConfigurationError) {
        guard !entries.isEmpty else {
            throw ConfigurationError(
                .unusableInput, "\(file ?? "the list") holds no URL: give one URL a line, optionally with a weight",
                setting: .urls)
        }
        self.entries = entries
        self.file = file
        var sum: UInt64 = 0
        cumulative = entries.map { entry in
            sum += UInt64(entry.weight)
            return sum
        }
        offset = Double(URLTemplate.random(device: -1, seed: seed) >> 11) / Double(1 << 53)
    }

    /// Reads the list in `text` (the content of `file`).
    public init(parsing text: String, file: String, seed: UInt64 = 1) throws(ConfigurationError) {
        var entries: [Entry] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            let place = "\(file) line \(number + 1)"
            guard fields.count <= 2 else {
                throw ConfigurationError(
                    .unusableInput, "\(place) has \(fields.count) fields: give a URL and, optionally, a weight",
                    setting: .urls)
            }
            var weight = 1
            if fields.count == 2 {
                guard let value = Int(fields[1]), (1...Self.maxWeight).contains(value) else {
                    throw ConfigurationError(
                        .unusableInput,
                        "\(place): the weight '\(String(fields[1]).escapingControlCharacters)' is not a whole number from 1 to \(Self.maxWeight)",
                        setting: .urls)
                }
                weight = value
            }
            guard entries.count < Self.maxEntries else {
                throw ConfigurationError(
                    .unusableInput, "\(file) holds more than \(Self.maxEntries) URLs; use a template for more",
                    setting: .urls)
            }
            let template: URLTemplate
            do { template = try URLTemplate(String(fields[0])) } catch {
                throw ConfigurationError(.unusableInput, "\(place): \(error.message)", setting: .urls)
            }
            entries.append(Entry(template: template, weight: weight, line: number + 1))
        }
        try self.init(entries: entries, file: file, seed: seed)
    }

    /// Reads the list from `path`.
    public static func read(_ path: String, seed: UInt64 = 1) throws(ConfigurationError) -> URLList {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(.unusableInput, "cannot read \(path)", setting: .urls)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError(.unusableInput, "\(path) is not UTF-8 text", setting: .urls)
        }
        return try URLList(parsing: text, file: path, seed: seed)
    }

    /// The sum of the weights.
    public var totalWeight: UInt64 { cumulative.last ?? 0 }

    /// Whether any device's URL differs from its entry's text (an entry is a template).
    public var hasTemplates: Bool { entries.contains { $0.template.isTemplate } }

    /// The entry device `device` requests: a golden-ratio sequence over the weights, so every stretch
    /// of the schedule gets each entry in proportion to its weight. O(log entries).
    public func entry(of device: Int) -> Int {
        guard entries.count > 1 else { return 0 }
        let position = (Double(device) * 0.618_033_988_749_894_9 + offset).truncatingRemainder(dividingBy: 1)
        let draw = min(UInt64(position * Double(totalWeight)), totalWeight - 1)
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] > draw { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// Rewrites each entry's URL (the embedded server's paths to its URL).
    mutating func mapURLs(_ transform: (String) -> String) throws(ConfigurationError) {
        for index in entries.indices {
            let text = entries[index].template.text
            let mapped = transform(text)
            if mapped != text { entries[index].template = try URLTemplate(mapped) }
        }
    }
}
