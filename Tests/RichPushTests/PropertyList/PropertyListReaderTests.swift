import Foundation
import RichPush
import TestSupport
import Testing

/// The bounded property list reader: valid plists read as Foundation reads them, and every defect of
/// a hostile one refused, by name, before Foundation sees it.
@Suite struct PropertyListReaderTests {
    typealias Builder = BinaryPlistBuilder
    static let reader = PropertyListReader(limits: .infoPlist)

    static func refusal(
        _ bytes: [UInt8], limits: PropertyListLimits = .infoPlist
    ) -> PropertyListError? {
        do {
            _ = try PropertyListReader(limits: limits).decode(bytes, path: "Ext/Info.plist")
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.binary, .xml])
    func readsWhatFoundationWrites(format: PropertyListSerialization.PropertyListFormat) throws {
        let root: [String: Any] = [
            "NSExtension": ["NSExtensionPointIdentifier": "com.apple.usernotifications.service"],
            "Numbers": [1, -7, Int64.max, 2.5], "Flag": true, "When": Date(timeIntervalSince1970: 1e9),
            "Blob": Data([0, 1, 2]), "Name": "Ünïcode",
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: root, format: format, options: 0)
        let document = try Self.reader.decode([UInt8](data), path: "Ext/Info.plist")
        #expect(document.format == format)
        #expect((try document.dictionary() as NSDictionary).isEqual(to: root))
        #expect(document.objects >= 13)
    }

    @Test func readsTheSampleAppsPlistsBinaryAndXML() throws {
        for name in ["NotificationService", "PersonalizedContent", "NotificationContent", "RichPushDemo"] {
            let path = Fixtures.root + "/Samples/app/\(name)/Info.plist"
            let document = try Self.reader.read(contentsOf: path)
            #expect(!(try document.dictionary()).isEmpty, "\(path)")
        }
    }

    @Test func refusesTheBombQuicklyWhateverItsSize() throws {
        // 2^64 objects if decoded: a reader that did not count would never return.
        for levels in [18, 40, 64, 200] {
            let error = try #require(Self.refusal(Builder.bomb(levels: levels)))
            #expect(error.code == .tooManyObjects, "\(error)")
            #expect(error.message.contains("expands to more than 100000 objects"), "\(error)")
            #expect(error.message.hasPrefix("'Ext/Info.plist'"))
        }
        #expect(Self.refusal(Builder.dictionaryBomb(levels: 64))?.code == .tooManyObjects)
        // Small enough: 2^16 - 1 objects are within 100,000 and Foundation reads them.
        #expect(Self.refusal(Builder.bomb(levels: 16)) == nil)
    }

    @Test func theObjectLimitIsExact() throws {
        // Three levels: 1 + 2 * (1 + 2 * 1) = 7 objects.
        let bomb = Builder.bomb(levels: 3)
        let seven = PropertyListLimits(maximumBytes: 1 << 20, maximumObjects: 7, kind: "a test plist")
        let six = PropertyListLimits(maximumBytes: 1 << 20, maximumObjects: 6, kind: "a test plist")
        let document = try PropertyListReader(limits: seven).decode(bomb, path: "x")
        #expect(document.objects == 7)
        #expect((document.value as? [Any])?.count == 2)
        #expect(Self.refusal(bomb, limits: six)?.code == .tooManyObjects)
    }

    /// An offset table longer than the object limit is refused before tables sized by it are made: 200
    /// entries that all name one integer (a small file that would make a large count).
    @Test func anOffsetTableOverTheLimitIsRefusedUpFront() throws {
        let limits = PropertyListLimits(maximumBytes: 1 << 20, maximumObjects: 100, kind: "a test plist")
        var bytes = Array("bplist00".utf8) + Builder.integer(7)
        let table = bytes.count
        for _ in 0..<200 { bytes += Builder.bigEndian(8, size: 1) }
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + Builder.bigEndian(200, size: 8) + Builder.bigEndian(0, size: 8)
        bytes += Builder.bigEndian(UInt64(table), size: 8)
        #expect(Self.refusal(bytes, limits: limits)?.code == .tooManyObjects)
    }

    @Test func theSizeLimitIsExact() throws {
        let small = PropertyListLimits(maximumBytes: 200, maximumObjects: 100, kind: "a test plist")
        let head = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>a</key><string>"#
        let tail = "</string></dict></plist>"
        let fill = String(repeating: "x", count: 200 - head.utf8.count - tail.utf8.count)
        let exact = Array((head + fill + tail).utf8)
        #expect(exact.count == 200)
        #expect(try PropertyListReader(limits: small).decode(exact, path: "x").dictionary()["a"] as? String == fill)
        let over = Array((head + fill + "x" + tail).utf8)
        #expect(Self.refusal(over, limits: small)?.code == .tooLarge)
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(over).write(to: URL(fileURLWithPath: folder + "/big.plist"))
        #expect {
            try PropertyListReader(limits: small).read(contentsOf: folder + "/big.plist")
        } throws: { error in
            (error as? PropertyListError)?.code == .tooLarge && "\(error)".contains("201 bytes")
        }
    }

    /// Each structural defect, reported as what it is (never as the XML reader's "Unexpected character b").
    @Test(arguments: [
        (Array("bplist00".utf8) + [0x08], "too short"),
        (Builder.assemble([[0x08], [0x08]], offsetSize: 0), "bad trailer: its offsets are 0 bytes"),
        (Builder.assemble([[0x08]], referenceSize: 9), "bad trailer: its object references are 9 bytes"),
        (Builder.assemble([[0x08]], top: 1), "bad trailer: its top object is 1, but it holds 1 objects"),
        (Builder.assemble([[0xA1, 3], [0x08]]), "object 0 that references object 3 of 2"),
        (Builder.cycle(), "reference cycle at object 0"),
        (Builder.assemble([[0xA1, 0]]), "reference cycle at object 0"),
        (Builder.assemble([[0xA3, 1, 1]]), "runs past the objects"),
        (Builder.assemble([[0x5F, 0x10, 200, 0x61]]), "claims 200 elements"),
        (Builder.assemble([[0xD1, 1, 1], [0x10, 1]]), "whose key, object 1, is not a string"),
        (Builder.assemble([[0xC1, 1], [0x08]]), "a set"),
        (Builder.assemble([[0x80, 1]]), "UID"),
        (Builder.assemble([[0x14] + [UInt8](repeating: 1, count: 16)]), "wider than 64 bits"),
        (Builder.assemble([[0x70]]), "unknown type (marker 0x70)"),
        (Builder.assemble([[0x4F, 0x20, 1]]), "whose length is not an integer"),
        (Array("bplist01".utf8) + [UInt8](repeating: 0, count: 40), "version 'bplist01'"),
    ])
    func namesEachDefect(bytes: [UInt8], says: String) throws {
        let error = try #require(Self.refusal(bytes))
        #expect(error.message.contains(says), "\(error)")
        #expect(!error.message.contains("Unexpected character"))
    }

    @Test func checksTheTrailerAndOffsetTableArithmetic() throws {
        var bytes = Builder.assemble([[0x08]])
        let trailer = bytes.count - 32
        // An object count whose offset table would wrap around 2^64.
        bytes.replaceSubrange((trailer + 8)..<(trailer + 16), with: Builder.bigEndian(UInt64.max / 2 + 2, size: 8))
        #expect(Self.refusal(bytes)?.message.contains("offset table out of range") == true)
        var table = Builder.assemble([[0x08]])
        table.replaceSubrange((trailer + 24)..<(trailer + 32), with: Builder.bigEndian(UInt64.max, size: 8))
        #expect(Self.refusal(table)?.message.contains("offset table out of range") == true)
        var offset = Builder.assemble([[0x08]])
        // Object 0's offset (the table's first entry, just before the trailer) pointing into the table.
        offset.replaceSubrange((trailer - 2)..<trailer, with: [0, 9])
        #expect(Self.refusal(offset)?.message.contains("object 0 at offset 9, outside the objects") == true)
    }

    @Test func refusesNestingDeeperThanTheLimit() throws {
        func chain(_ depth: Int) -> [UInt8] {
            var objects = (0..<(depth - 1)).map { index in [0xA1] + Builder.reference(index + 1, size: 2) }
            objects.append(Builder.integer(1))
            return Builder.assemble(objects, referenceSize: 2)
        }
        #expect(Self.refusal(chain(PropertyListLimits.maximumDepth)) == nil, "255 arrays deep is read")
        #expect(Self.refusal(chain(PropertyListLimits.maximumDepth + 2))?.message.contains("deeper than 256") == true)
    }

    @Test func xmlEntitiesOtherEncodingsAndOpenStepAreRefused() throws {
        // Foundation's XML parser refuses a DTD internal subset, so no entity can expand.
        let entities = """
            <?xml version="1.0"?><!DOCTYPE plist [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>
            <plist version="1.0"><dict><key>k</key><string>&b;</string></dict></plist>
            """
        #expect(Self.refusal(Array(entities.utf8))?.code == .notAPropertyList)
        let utf16 = #"<?xml version="1.0" encoding="UTF-16"?><plist version="1.0"><dict/></plist>"#
        #expect(Self.refusal(Array(utf16.utf8))?.code == .unsupported)
        #expect(Self.refusal(Array("<abcd>".utf8))?.code == .unsupported, "OpenStep data")
        #expect(Self.refusal(Array("{ a = b; }".utf8))?.code == .notAPropertyList)
        #expect(Self.refusal([])?.message.contains("is empty") == true)
        let many = "<plist><array>" + String(repeating: "<true/>", count: 100_001) + "</array></plist>"
        #expect(Self.refusal(Array(many.utf8))?.code == .tooManyObjects)
    }

    @Test func refusesWhatIsNotARegularFileWithoutBlocking() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(mkfifo(folder + "/fifo.plist", 0o600) == 0)
        for path in [folder + "/fifo.plist", "/dev/zero", folder] {
            #expect {
                try Self.reader.read(contentsOf: path)
            } throws: { error in
                (error as? PropertyListError)?.code == .notARegularFile && "\(error)".contains("not a regular file")
            }
        }
        #expect {
            try Self.reader.read(contentsOf: folder + "/missing.plist")
        } throws: { error in (error as? PropertyListError)?.code == .missing }
    }
}
