import Foundation
import POSIXKit
import RichPush

/// The asset URLs a bench's devices request: one URL or template (`--url`), or a list read from a
/// file (`--urls`), each entry with a weight.
///
/// The file has one entry a line: a URL (or a ``URLTemplate``), then optionally whitespace and a
/// weight, a whole number from 1 to 1,000,000 (default 1). Blank lines and lines starting with `#`
/// are skipped. Lines end with LF, CRLF or CR, and none may be longer than ``maxLineBytes``. Device `i` of the whole run requests entry ``entry(of:)``: entries get shares of the
/// devices in proportion to their weights, spread over the schedule (not one entry after another), the
/// same on every shard and in every run with the same seed.
///
/// ```text
/// # hero image, two variants, 3:1
/// https://cdn.example.com/campaign/hero-a.jpg 3
/// https://cdn.example.com/campaign/hero-b.jpg?u={device}
/// ```
package struct URLList: Sendable, Equatable {
    /// One line of the list.
    package struct Entry: Sendable, Equatable {
        /// The entry as written (the report's row key).
        package var template: URLTemplate
        package var weight: Int
        /// The line it was read from (1-based; 0 for `--url`).
        package var line: Int

        package init(template: URLTemplate, weight: Int, line: Int) {
            self.template = template
            self.weight = weight
            self.line = line
        }
    }

    package private(set) var entries: [Entry]
    /// The file it was read from, nil for `--url`.
    package let file: String?
    /// Running sums of the weights: entry `k` takes the draws below `cumulative[k]`.
    private let cumulative: [UInt64]
    private let offset: Double

    /// The most entries a list may hold.
    package static let maxEntries = 100_000
    /// The most weight an entry may have.
    package static let maxWeight = 1_000_000

    /// One entry: every device requests `url` (a template or a plain URL).
    package init(single url: String, seed: UInt64 = 1) throws(ConfigurationError) {
        try self.init(entries: [Entry(template: URLTemplate(url), weight: 1, line: 0)], file: nil, seed: seed)
    }

    /// The entries of a list; `seed` moves where the spread starts.
    package init(entries: [Entry], file: String?, seed: UInt64 = 1) throws(ConfigurationError) {
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
    package init(parsing text: String, file: String, seed: UInt64 = 1) throws(ConfigurationError) {
        var lines = Lines(file: file)
        var entries: [Entry] = []
        try lines.feed(Array(text.utf8)) { number, line throws(ConfigurationError) in
            try Self.add(line, number: number, file: file, to: &entries)
        }
        try lines.finish { number, line throws(ConfigurationError) in
            try Self.add(line, number: number, file: file, to: &entries)
        }
        try self.init(entries: entries, file: file, seed: seed)
    }

    /// Reads the list from `path`, a regular file, a block at a time: a line longer than
    /// ``maxLineBytes`` is refused as soon as it is, however long it goes on.
    package static func read(_ path: String, seed: UInt64 = 1) throws(ConfigurationError) -> URLList {
        let descriptor: Int32
        do { descriptor = try SystemCall.openRegularFile(path) } catch {
            throw ConfigurationError(.unusableInput, "cannot read \(path): \(error.message)", setting: .urls)
        }
        defer { close(descriptor) }
        var lines = Lines(file: path)
        var entries: [Entry] = []
        var block = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count: Int
            do {
                count = try block.withUnsafeMutableBytes { buffer in
                    Result { () throws(SystemError) in try SystemCall.read(descriptor, into: buffer, path: path) }
                }.get()
            } catch {
                throw ConfigurationError(.unusableInput, "cannot read \(path): \(error.message)", setting: .urls)
            }
            if count == 0 { break }
            try lines.feed(block[0..<count]) { number, line throws(ConfigurationError) in
                try add(line, number: number, file: path, to: &entries)
            }
        }
        try lines.finish { number, line throws(ConfigurationError) in
            try add(line, number: number, file: path, to: &entries)
        }
        return try URLList(entries: entries, file: path, seed: seed)
    }

    /// The longest line a list may hold, in bytes: a URL longer than this is answered 414 by most
    /// servers and CDNs (8 KB is nginx's and Apache's default for a whole request line).
    package static let maxLineBytes = 8192

    /// Adds the entry on `bytes`, line `number` of `file`, unless it is blank or a comment.
    private static func add(
        _ bytes: ArraySlice<UInt8>, number: Int, file: String, to entries: inout [Entry]
    ) throws(ConfigurationError) {
        let place = "\(file) line \(number)"
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigurationError(.unusableInput, "\(place) is not UTF-8 text", setting: .urls)
        }
        let line = text.trimmingCharacters(in: .whitespaces)
        if line.isEmpty || line.hasPrefix("#") { return }
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count <= 2 else {
            throw ConfigurationError(
                .unusableInput, "\(place) has \(fields.count) fields: give a URL and, optionally, a weight",
                setting: .urls)
        }
        var weight = 1
        if fields.count == 2 {
            guard let value = Int(fields[1]), (1...maxWeight).contains(value) else {
                throw ConfigurationError(
                    .unusableInput,
                    "\(place): the weight '\(String(fields[1]).escapingControlCharacters)' is not a whole number from 1 to \(maxWeight)",
                    setting: .urls)
            }
            weight = value
        }
        guard entries.count < maxEntries else {
            throw ConfigurationError(
                .unusableInput, "\(file) holds more than \(maxEntries) URLs; use a template for more", setting: .urls)
        }
        let template: URLTemplate
        do { template = try URLTemplate(String(fields[0])) } catch {
            throw ConfigurationError(.unusableInput, "\(place): \(error.message)", setting: .urls)
        }
        entries.append(Entry(template: template, weight: weight, line: number))
    }

    /// Splits bytes into lines as they arrive, at LF, CRLF or a lone CR (a list saved on Windows or an old
    /// Mac reads as one written here), and refuses a line past ``maxLineBytes`` while it is read.
    struct Lines {
        let file: String
        private var line: [UInt8] = []
        private var number = 1
        private var afterCR = false

        init(file: String) { self.file = file }

        /// Hands each line that `bytes` completes to `body`, with its 1-based number.
        mutating func feed<Bytes: Collection<UInt8>>(
            _ bytes: Bytes, _ body: (Int, ArraySlice<UInt8>) throws(ConfigurationError) -> Void
        ) throws(ConfigurationError) {
            for byte in bytes {
                if afterCR {
                    afterCR = false
                    if byte == 0x0A { continue }
                }
                if byte == 0x0A || byte == 0x0D {
                    afterCR = byte == 0x0D
                    try body(number, line[...])
                    line.removeAll(keepingCapacity: true)
                    number += 1
                    continue
                }
                guard line.count < URLList.maxLineBytes else {
                    throw ConfigurationError(
                        .unusableInput,
                        "\(file) line \(number) is longer than \(URLList.maxLineBytes) bytes: servers answer a URL "
                            + "that long with 414; shorten it, or use a template ({device}, {random})",
                        setting: .urls)
                }
                line.append(byte)
            }
        }

        /// Hands the last line, when the text does not end with a line ending.
        mutating func finish(_ body: (Int, ArraySlice<UInt8>) throws(ConfigurationError) -> Void)
            throws(ConfigurationError)
        {
            if !line.isEmpty { try body(number, line[...]) }
            line.removeAll()
        }
    }

    /// The sum of the weights.
    package var totalWeight: UInt64 { cumulative.last ?? 0 }

    /// Whether any device's URL differs from its entry's text (an entry is a template).
    package var hasTemplates: Bool { entries.contains { $0.template.isTemplate } }

    /// The entry device `device` requests: a golden-ratio sequence over the weights, so every stretch
    /// of the schedule gets each entry in proportion to its weight. O(log entries).
    package func entry(of device: Int) -> Int {
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
