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
        let back = try document.dictionary()
        let events = try #require(back["pending_custom_events"] as? [Any])
        let first = try #require(events.first as? [String: Any])
        let properties = try #require(first["properties"] as? [String: Any])
        #expect(first["event_name"] as? String == "push_opened" && properties["source"] as? String == "push")
        #expect(properties["tiers"] as? [String] == ["gold", "silver"])
        let second = try #require(events.last as? [String: Any])
        #expect(second["count"] as? Int == 3 && second["ratio"] as? Double == 0.5 && second["first"] as? Bool == true)
        #expect(back["blob"] as? Data == Data([0, 1, 2]))
        #expect(back["when"] as? Date == Date(timeIntervalSince1970: 1e9))
        #expect((back["empty"] as? [Any])?.isEmpty == true)
        #expect(back["big"] as? Int64 == Int64.max && back["negative"] as? Int == -7)
        #expect(Set(back.keys) == Set(root.keys))
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
