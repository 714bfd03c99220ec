import Foundation

/// A campaign's networks: which share of devices downloads over which profile.
///
/// Written `3g=20,lte=70,wifi=10` (whole percentages summing to 100; custom profiles have no
/// name here, so a mix uses built-in names). ``assignments(devices:seed:)`` gives each device a
/// profile so that the counts are exactly the requested shares (largest remainder), in an order
/// shuffled by the seed: the same seed gives every run and every shard the same assignment.
///
/// ```swift
/// let mix = try NetworkMix(parsing: "3g=20,lte=70,wifi=10")
/// let profiles = mix.assignments(devices: 1000, seed: 7)  // 200 x 3G, 700 x LTE, 100 x Wi-Fi
/// ```
package struct NetworkMix: Sendable, Hashable {
    /// The seed of every draw (the network mix, the audience, a bench's jitter) when none is given.
    package static let defaultSeed: UInt64 = 1

    /// One profile and its share.
    package struct Entry: Sendable, Hashable {
        package var profile: NetworkProfile
        /// Percent of devices, 1 to 100.
        package var percent: Int

        package init(profile: NetworkProfile, percent: Int) {
            self.profile = profile
            self.percent = percent
        }
    }

    /// The profiles in the order given.
    package var entries: [Entry]

    /// How a network mix is written.
    package static let grammar = """
        MIX is NAME=PERCENT[,NAME=PERCENT...] with built-in profile names and whole percentages summing to 100,
        for example 3g=20,lte=70,wifi=10. Names: \(NetworkProfile.builtIn.map(\.name).joined(separator: ", ")).
        """

    package init(entries: [Entry]) throws(NetworkError) {
        guard !entries.isEmpty else { throw Self.invalid("the mix is empty") }
        let total = entries.reduce(0) { $0 + $1.percent }
        guard total == 100 else { throw Self.invalid("the percentages sum to \(total), not 100") }
        self.entries = entries
    }

    /// Parses `NAME=PERCENT,...` (see ``grammar``).
    package init(parsing text: String) throws(NetworkError) {
        var entries: [Entry] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw Self.invalid("'\(item)' is not NAME=PERCENT") }
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            var number = parts[1].trimmingCharacters(in: .whitespaces)
            if number.hasSuffix("%") { number.removeLast() }
            guard let profile = NetworkProfile.named(name) else {
                throw Self.invalid("'\(name)' is not a built-in profile")
            }
            guard !entries.contains(where: { $0.profile == profile }) else {
                throw Self.invalid("'\(name)' is given twice")
            }
            guard number.allSatisfy(\.isASCII), let percent = Int(number), (1...100).contains(percent) else {
                throw Self.invalid("'\(parts[1])' is not a whole percentage from 1 to 100")
            }
            entries.append(Entry(profile: profile, percent: percent))
        }
        try self.init(entries: entries)
    }

    private static func invalid(_ reason: String) -> NetworkError {
        NetworkError(.invalidMix, "invalid network mix: \(reason).\n\(grammar)")
    }

    /// How many of `devices` each entry gets: floors of the exact shares, then the devices left over
    /// to the largest remainders (ties to the entry given first). The counts sum to `devices`.
    package func counts(devices: Int) -> [Int] {
        Shares.counts(percents: entries.map(\.percent), devices: devices)
    }

    /// The profile of each device `0..<devices`: exact counts (``counts(devices:)``) in a seeded shuffle.
    package func assignments(devices: Int, seed: UInt64) -> [NetworkProfile] {
        entryIndices(devices: devices, seed: seed).map { entries[Int($0)].profile }
    }

    /// The index into ``entries`` of each device `0..<devices`, as ``assignments(devices:seed:)`` draws them
    /// (one byte a device, so a million devices cost a megabyte).
    package func entryIndices(devices: Int, seed: UInt64) -> [UInt8] {
        Shares.entryIndices(percents: entries.map(\.percent), devices: devices, seed: seed)
    }
}

/// Devices shared out by whole percentages: the network mix's and the audience's draw.
enum Shares {
    /// How many of `devices` each share gets: floors of the exact shares, then the devices left over
    /// to the largest remainders (ties to the share given first). The counts sum to `devices`.
    static func counts(percents: [Int], devices: Int) -> [Int] {
        let exact = percents.map { devices * $0 }
        var counts = exact.map { $0 / 100 }
        let remainders = exact.map { $0 % 100 }
        let left = devices - counts.reduce(0, +)
        let order = remainders.indices.sorted {
            remainders[$0] != remainders[$1] ? remainders[$0] > remainders[$1] : $0 < $1
        }
        for index in order.prefix(left) { counts[index] += 1 }
        return counts
    }

    /// The share of each device `0..<devices`: exact counts in a seeded shuffle (one byte a device).
    static func entryIndices(percents: [Int], devices: Int, seed: UInt64) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(devices)
        for (index, count) in counts(percents: percents, devices: devices).enumerated() {
            result.append(contentsOf: repeatElement(UInt8(truncatingIfNeeded: index), count: count))
        }
        // Fisher-Yates written out (not the standard library's shuffle, whose draws may change
        // between releases), so a seed keeps naming the same assignment.
        var generator = SeededGenerator(seed: seed)
        var index = result.count - 1
        while index > 0 {
            let other = Int(generator.next().multipliedFullWidth(by: UInt64(index + 1)).high)
            result.swapAt(index, other)
            index -= 1
        }
        return result
    }
}

/// SplitMix64: a small deterministic generator, so a seed names one shuffle on every platform.
struct SeededGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
