import Foundation
import RichPush
import Testing

/// The property list writer: Swift values and decoded trees written as Foundation objects it builds
/// itself, read back unchanged, and a value no property list holds refused by its place in the tree.
/// (The statically linked binary it exists for is run by the end-to-end tier's analytics tests.)
@Suite struct PropertyListWriterTests {
    static let reader = PropertyListReader(limits: .suite)

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.binary, .xml])
    func writesSwiftCollectionsAndReadsThemBack(format: PropertyListSerialization.PropertyListFormat) throws {
        let root: [String: Any] = [
            "pending_custom_events": [
                ["event_name": "push_opened", "properties": ["source": "push", "tiers": ["gold", "silver"]]],
                ["event_name": "viewed", "count": 3, "ratio": 0.5, "first": true],
            ],
            "blob": Data([0, 1, 2]), "when": Date(timeIntervalSince1970: 1e9), "empty": [Any](),
            "big": Int64.max, "negative": -7,
        ]
        let data = try PropertyListWriter.data(root, format: format)
        let document = try Self.reader.decode([UInt8](data), path: "suite.plist")
        #expect(document.format == format)
        #expect((try document.dictionary() as NSDictionary).isEqual(to: root))
    }

    /// A decoded tree (Swift arrays of NSNumber and AnyHashable-keyed dictionaries) is written back as
    /// it was read: an integer 1 stays an integer, a boolean stays a boolean.
    @Test func writesADecodedTreeBackUnchanged() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>a</key><array><integer>1</integer><true/><real>2.5</real>\
            <dict><key>b</key><array><string>x</string></array></dict></array></dict></plist>
            """
        let decoded = try Self.reader.decode(Array(xml.utf8), path: "suite.plist").dictionary()
        let again = try Self.reader.decode(
            [UInt8](try PropertyListWriter.data(decoded, format: .xml)), path: "suite.plist")
        let written = String(decoding: try PropertyListWriter.data(decoded, format: .xml), as: UTF8.self)
        #expect(written.contains("<integer>1</integer>") && written.contains("<true/>"), "\(written)")
        #expect((try again.dictionary() as NSDictionary).isEqual(to: decoded))
    }

    @Test func refusesAValueNoPropertyListHolds() {
        #expect {
            _ = try PropertyListWriter.data(["events": [["at": URL(fileURLWithPath: "/tmp")]]], format: .binary)
        } throws: { error in
            "\(error)".contains("root.events[0].at") && "\(error)".contains("cannot hold")
        }
        #expect {
            _ = try PropertyListWriter.data([1: "one"] as [Int: String], format: .binary)
        } throws: { error in
            "\(error)".contains("not a string")
        }
    }
}
