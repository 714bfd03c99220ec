/// A campaign's audience: which share of its phones runs which iOS version, and which SDK their app's
/// extension was linked against.
///
/// Written `18=60,17=25,16=10,15=5` (whole percentages summing to 100); `VERSION@SDK` gives a linked
/// SDK other than the version's own (`18@16`: iOS 18 phones running an extension built with the 16
/// SDK). Devices are drawn as a network mix draws them (``NetworkMix/counts(devices:)``: exact counts,
/// a seeded shuffle), with a seed of their own, so versions and networks do not go together.
///
/// ```swift
/// let audience = try AudienceMix(parsing: "17=75,16=25")
/// audience.entries.map(\.device.key)  // ["17.0", "16.0"]
/// ```
package struct AudienceMix: Sendable, Hashable, CustomStringConvertible {
    /// One kind of phone and its share.
    package struct Entry: Sendable, Hashable {
        package var device: DeviceVersion
        /// Percent of devices, 1 to 100.
        package var percent: Int
    }

    /// The phones in the order given.
    package var entries: [Entry]

    /// The most phones an audience names (every version with a few linked SDKs).
    package static let maxEntries = 12

    /// How an audience is written.
    package static let grammar = """
        An audience is VERSION[@SDK]=PERCENT[,...] with whole percentages summing to 100, for example \
        18=60,17=25,16=10,15=5 or 18=70,18@16=30 (iOS 18 phones whose app's extension was built with the 16 SDK). \
        Versions: \(IOSVersion.supportedMajors.map(String.init).joined(separator: ", ")), with a minor if you like.
        """

    /// Parses `VERSION[@SDK]=PERCENT,...` (commas or new lines; `#` starts a comment in a file).
    package init(parsing text: String) throws(ConfigurationError) {
        var entries: [Entry] = []
        let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).map { line in
            line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        }
        let items = lines.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        for item in items {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw Self.invalid("'\(item)' is not VERSION=PERCENT") }
            let versions = parts[0].trimmingCharacters(in: .whitespaces).split(
                separator: "@", omittingEmptySubsequences: false)
            guard (1...2).contains(versions.count), let ios = IOSVersion(parsing: String(versions[0])),
                versions.count == 1 || IOSVersion(parsing: String(versions[1])) != nil
            else { throw Self.invalid("'\(parts[0])' is not a version richpush has facts for") }
            let device = DeviceVersion(
                ios: ios, linkedSDK: versions.count == 2 ? IOSVersion(parsing: String(versions[1])) : nil)
            guard !entries.contains(where: { $0.device == device }) else {
                throw Self.invalid("'\(parts[0])' is given twice")
            }
            var number = parts[1].trimmingCharacters(in: .whitespaces)
            if number.hasSuffix("%") { number.removeLast() }
            guard number.allSatisfy(\.isASCII), let percent = Int(number), (1...100).contains(percent) else {
                throw Self.invalid("'\(parts[1])' is not a whole percentage from 1 to 100")
            }
            entries.append(Entry(device: device, percent: percent))
            guard entries.count <= Self.maxEntries else {
                throw Self.invalid("it has more than \(Self.maxEntries) phones")
            }
        }
        guard !entries.isEmpty else { throw Self.invalid("it is empty") }
        let total = entries.reduce(0) { $0 + $1.percent }
        guard total == 100 else { throw Self.invalid("the percentages sum to \(total), not 100") }
        self.entries = entries
    }

    private static func invalid(_ reason: String) -> ConfigurationError {
        ConfigurationError(.invalidValue, "invalid audience: \(reason). \(grammar)", setting: .iosMix)
    }

    /// `17.0=75,16.0=25`, as reports record it.
    package var description: String {
        entries.map { "\($0.device.key)=\($0.percent)" }.joined(separator: ",")
    }

    /// The index into ``entries`` of each device `0..<devices`: exact counts in a seeded shuffle, drawn
    /// apart from the network mix's (the seed is mixed with a constant of its own).
    package func entryIndices(devices: Int, seed: UInt64) -> [UInt8] {
        Shares.entryIndices(percents: entries.map(\.percent), devices: devices, seed: seed ^ 0x1054_0000_0000_0017)
    }
}

extension DeviceVersion {
    /// The row a device's phone has in reports: `17.0`, or `18.0@16.0` for an extension linked against
    /// another SDK.
    public var key: String { linkedSDK == ios ? ios.description : "\(ios)@\(linkedSDK)" }
}
