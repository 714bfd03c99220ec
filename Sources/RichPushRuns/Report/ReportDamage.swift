import RichPush

/// A report or summary read back from a file whose numbers cannot be right: a negative count, a
/// sum that leaves the integer's range, a histogram whose buckets do not add up to its count.
///
/// Reports come from other machines and other runs (`report merge`), so every number in them is
/// outside input: it is checked when read and added with a check when merged, and a damaged file is
/// refused with its field named, never a trap.
package struct ReportDamage: Error, Sendable, CustomStringConvertible {
    /// What is wrong, naming the field (`verdicts.attached`, `timeline[3].bytes`).
    package var message: String

    package init(_ message: String) { self.message = message }

    package var description: String { message }

    /// `value` when it is not negative.
    static func nonNegative<T: FixedWidthInteger>(_ value: T, _ field: String) throws(ReportDamage) -> T {
        guard value >= 0 else { throw ReportDamage("\(field) is \(value): a count cannot be negative") }
        return value
    }

    /// Every count of `counts` when none is negative.
    static func nonNegative(_ counts: [String: Int], _ field: String) throws(ReportDamage) {
        for (key, value) in counts where value < 0 {
            throw ReportDamage("\(field).\(key) is \(value): a count cannot be negative")
        }
    }

    /// `value` when it is a finite number that is not negative (a duration, a CPU time).
    static func nonNegative(_ value: Double, _ field: String) throws(ReportDamage) -> Double {
        guard value.isFinite && value >= 0 else {
            throw ReportDamage("\(field) is \(value): it must be a finite number, not negative")
        }
        return value
    }

    /// `part` when it is not more than `whole` (attached devices are some of the devices).
    static func partOf(_ part: Int, _ partField: String, _ whole: Int, _ wholeField: String) throws(ReportDamage) {
        guard part <= whole else {
            throw ReportDamage(
                "\(partField) is \(part), more than \(wholeField) \(whole): a part cannot be more than the whole")
        }
    }

    /// The most entries one array or object of a report holds: a timeline of a second per entry stops
    /// at a week (``BenchReport/maxTimelineSeconds``); `--urls` lists and shard lists at 100,000.
    static let maxContainerEntries = BenchReport.maxTimelineSeconds + 1
    /// The most values a whole report holds: a week's timeline at about 50 values a second, beside a
    /// 100,000-entry URL breakdown and the histograms (the 256 MiB file cap bounds the rest).
    static let maxValues = 40_000_000
    /// The deepest nesting a report has (a few levels; 64 leaves room).
    static let maxDepth = 64

    /// Throws when the JSON `bytes` hold more than any report can (a container past
    /// ``maxContainerEntries``, more than ``maxValues`` values, nesting past ``maxDepth``): one pass
    /// over the bytes, before any decoder builds them (a 200 MB series took 20 to 30 s to decode only
    /// to be refused). Whether the text is valid JSON is the decoder's to say.
    static func checkSize(
        of bytes: [UInt8], maxContainerEntries: Int = maxContainerEntries, maxValues: Int = maxValues,
        maxDepth: Int = maxDepth
    ) throws(ReportDamage) {
        var entries: [Int] = []  // per open container: separators seen, +1 once a value began
        var values = 0
        var strings = JSONStringTracker()
        for (offset, byte) in bytes.enumerated() where !strings.isInString(byte) {
            switch byte {
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                guard entries.count < maxDepth else {
                    throw ReportDamage("nesting at byte \(offset) is deeper than \(maxDepth) levels: no report is")
                }
                entries.append(0)
            case UInt8(ascii: "]"), UInt8(ascii: "}"): _ = entries.popLast()
            case UInt8(ascii: ","):
                values += 1
                guard values <= maxValues else {
                    throw ReportDamage("the file holds more than \(maxValues) values: no report does")
                }
                guard let last = entries.indices.last else { continue }
                entries[last] += 1
                guard entries[last] < maxContainerEntries else {
                    throw ReportDamage(
                        "an array or object reaches \(maxContainerEntries) entries at byte \(offset): no report holds "
                            + "that many")
                }
            default: continue
            }
        }
    }

    /// Throws when an object anywhere in the JSON `bytes` repeats a key: richpush never writes one, a
    /// decoder would keep only one of them silently, and an edited report is not a measurement.
    static func checkKeysAreUnique(in bytes: [UInt8]) throws(ReportDamage) {
        guard let root = try? JSONValue.parse(bytes) else { return }  // the decoder names what is wrong
        var pending: [(value: JSONValue, path: String)] = [(root, "")]
        while let (value, path) = pending.popLast() {
            switch value {
            case .object(let members):
                var seen: Set<String> = []
                for member in members {
                    let name = path.isEmpty ? member.key : path + "." + member.key
                    guard seen.insert(member.key).inserted else {
                        throw ReportDamage("'\(name.escapingControlCharacters)' appears more than once")
                    }
                    pending.append((member.value, name))
                }
            case .array(let items):
                for (index, item) in items.enumerated() { pending.append((item, path + "[\(index)]")) }
            default: break
            }
        }
    }

    /// Adds `other` to `total`, or throws when the sum leaves the type's range.
    static func add<T: FixedWidthInteger>(_ total: inout T, _ other: T, _ field: String) throws(ReportDamage) {
        let (sum, overflow) = total.addingReportingOverflow(other)
        guard !overflow else { throw ReportDamage("\(field) adds up past \(T.max): the counts cannot be right") }
        total = sum
    }

    /// Adds every count of `other` to the same key of `total`, each with a check.
    static func add(_ total: inout [String: Int], _ other: [String: Int], _ field: String) throws(ReportDamage) {
        for (key, value) in other { try add(&total[key, default: 0], value, "\(field).\(key)") }
    }
}
