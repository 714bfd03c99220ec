import Foundation
import TestSupport
import Testing

@testable import RichPush

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
        let seven = PropertyListLimits(
            maximumBytes: 1 << 20, maximumObjects: 7, maximumExpandedBytes: 1 << 20, kind: "a test plist")
        let six = PropertyListLimits(
            maximumBytes: 1 << 20, maximumObjects: 6, maximumExpandedBytes: 1 << 20, kind: "a test plist")
        let document = try PropertyListReader(limits: seven).decode(bomb, path: "x")
        #expect(document.objects == 7)
        #expect((document.value as? [Any])?.count == 2)
        #expect(Self.refusal(bomb, limits: six)?.code == .tooManyObjects)
    }

    /// The tracker's second bomb: a 460 KB Info.plist, `{NSAppTransportSecurity: [s, s, ...]}` with one
    /// 100 KB string referenced 90,000 times. Its size and objects are within the Info.plist limits, and
    /// Foundation would decode it to 9 GB of strings (the CLI died at 3.8 GB): refused by its bytes.
    @Test func refusesOneLargeStringReferencedManyTimes() throws {
        let string = Builder.string(String(repeating: "a", count: 100_000))
        let bomb = Builder.sharedLeafBomb(string, references: 90_000)
        #expect((450_000..<470_000).contains(bomb.count), "\(bomb.count) bytes")
        let error = try #require(Self.refusal(bomb))
        #expect(error.code == .tooManyExpandedBytes, "\(error)")
        #expect(
            error.message.hasPrefix(
                "'Ext/Info.plist' expands to more than 4 MiB of strings and data, the most richpush reads for an "
                    + "Info.plist"), "\(error)")
        // Within every other limit: without a byte limit the walk counts it in full (one addition per
        // reference), and nothing else would have stopped Foundation.
        let unbounded = PropertyListLimits(
            maximumBytes: 1 << 20, maximumObjects: 100_000, maximumExpandedBytes: .max, kind: "a test plist")
        let expansion = try BinaryPropertyListValidator.validate(bomb, limits: unbounded)
        #expect(expansion == .init(objects: 90_003, bytes: 90_000 * 100_000 + "NSAppTransportSecurity".count))
    }

    /// Just under the Info.plist limit is read, and its expansion reported; one reference more is not.
    @Test func theInfoPlistByteLimitIsReadUpToTheByte() throws {
        let key = "NSAppTransportSecurity".count
        // 4 MiB = 1,023 references of 4,096 bytes, plus 4,096 bytes, less the key's 22.
        let string = Builder.string(String(repeating: "b", count: 4096))
        let last = Builder.string(String(repeating: "c", count: 4096 - key))
        func plist(_ references: Int, lastString: [UInt8]?) -> [UInt8] {
            var objects = [
                Builder.dictionary(keys: [1], values: [2], referenceSize: 2), Builder.string("NSAppTransportSecurity"),
                Builder.array(
                    [Int](repeating: 3, count: references) + (lastString == nil ? [] : [4]), referenceSize: 2),
                string,
            ]
            if let lastString { objects.append(lastString) }
            return Builder.assemble(objects, referenceSize: 2, offsetSize: 4)
        }
        let full = plist(1023, lastString: last)
        let document = try Self.reader.decode(full, path: "Ext/Info.plist")
        #expect(document.expandedBytes == 4 << 20)
        #expect((try document.dictionary()["NSAppTransportSecurity"] as? [String])?.count == 1024)
        let over = plist(1023, lastString: Builder.string(String(repeating: "c", count: 4096 - key + 1)))
        #expect(Self.refusal(over)?.code == .tooManyExpandedBytes)
        #expect(Self.refusal(plist(1024, lastString: nil))?.code == .tooManyExpandedBytes)
    }

    /// Strings (ASCII one byte a character, UTF-16 two a unit), data and dictionary keys: each counted
    /// once for every place it appears in the decoded value, up to the limit and not one byte more.
    @Test(arguments: [
        (Builder.string("abcdefghij"), 10), (Builder.string("ééééé"), 10), (Builder.data(Array(0..<10)), 10),
    ])
    func theExpandedByteLimitIsExact(leaf: [UInt8], length: Int) throws {
        // {k: [leaf, leaf, leaf]}: 1 + 3 * 10 bytes.
        let plist = Builder.sharedLeafBomb(leaf, references: 3, key: "k", referenceSize: 1)
        func limits(_ bytes: Int) -> PropertyListLimits {
            PropertyListLimits(maximumBytes: 1 << 20, maximumObjects: 100, maximumExpandedBytes: bytes, kind: "a test")
        }
        let document = try PropertyListReader(limits: limits(1 + 3 * length)).decode(plist, path: "x")
        #expect(document.expandedBytes == 31)
        #expect((try document.dictionary()["k"] as? [Any])?.count == 3)
        let error = try #require(Self.refusal(plist, limits: limits(30)))
        #expect(error.code == .tooManyExpandedBytes)
        #expect(
            error.message.contains(
                "expands to more than 30 bytes of strings and data, the most richpush reads for a test"))
    }

    @Test func sharedDictionaryKeysCountEachTimeTheyAppear() throws {
        // [d, d, d, d] where d = {key: 1}, the key 1,000 bytes: 4,000 bytes of keys.
        let key = String(repeating: "k", count: 1000)
        let objects = [
            Builder.array([1, 1, 1, 1]), Builder.dictionary(keys: [2], values: [3], referenceSize: 1),
            Builder.string(key), Builder.integer(1),
        ]
        let plist = Builder.assemble(objects)
        func limits(_ bytes: Int) -> PropertyListLimits {
            PropertyListLimits(maximumBytes: 1 << 20, maximumObjects: 100, maximumExpandedBytes: bytes, kind: "a test")
        }
        let document = try PropertyListReader(limits: limits(4000)).decode(plist, path: "x")
        #expect(document.expandedBytes == 4000)
        #expect((document.value as? [[String: Int]])?.map { $0[key] } == [1, 1, 1, 1])
        #expect(Self.refusal(plist, limits: limits(3999))?.code == .tooManyExpandedBytes)
        // One dictionary whose 20 keys are all the same 1,000-byte string: 20,000 bytes to the walk.
        let repeated = Builder.assemble([
            Builder.dictionary(
                keys: [Int](repeating: 1, count: 20), values: [Int](repeating: 2, count: 20), referenceSize: 1),
            Builder.string(key), Builder.integer(1),
        ])
        #expect(Self.refusal(repeated, limits: limits(19_999))?.code == .tooManyExpandedBytes)
    }

    /// Each use has its own byte limit: what an Info.plist may not hold, a suite may.
    @Test func theSuiteAndUserAttributeLimits() throws {
        let string = Builder.string(String(repeating: "s", count: 64 << 10))
        // 128 MiB and one reference more: refused for a suite (70 KB of file, 2,052 objects).
        let bomb = Builder.sharedLeafBomb(string, references: 2049, key: "pending_custom_events", referenceSize: 2)
        let error = try #require(Self.refusal(bomb, limits: .suite))
        #expect(error.code == .tooManyExpandedBytes)
        #expect(
            error.message.contains(
                "expands to more than 128 MiB of strings and data, the most richpush reads for an App Group suite"))
        // 6.4 MB: a suite reads it, an Info.plist does not.
        let some = Builder.sharedLeafBomb(string, references: 100, key: "pending_custom_events", referenceSize: 2)
        let document = try PropertyListReader(limits: .suite).decode(some, path: "group.plist")
        #expect(document.expandedBytes == 100 * (64 << 10) + "pending_custom_events".count)
        #expect(Self.refusal(some)?.code == .tooManyExpandedBytes)
        // A stored user attribute holds no more than its size: {"email": [s, s]} of 40 KB is refused.
        let attribute = Builder.sharedLeafBomb(
            Builder.string(String(repeating: "e", count: 40_000)), references: 2, key: "email", referenceSize: 1)
        #expect(attribute.count < PropertyListLimits.userAttribute.maximumBytes)
        #expect(Self.refusal(attribute, limits: .userAttribute)?.code == .tooManyExpandedBytes)
    }

    /// An XML plist shares nothing: its strings hold no more bytes than the file, which is its expansion.
    @Test func xmlExpansionIsBoundedByTheFileSize() throws {
        let text = String(repeating: "&amp;", count: 1000) + String(repeating: "x", count: 100_000)
        let xml = Array(#"<plist version="1.0"><dict><key>k</key><string>\#(text)</string></dict></plist>"#.utf8)
        let document = try Self.reader.decode(xml, path: "Ext/Info.plist")
        let string = try #require(try document.dictionary()["k"] as? String)
        #expect(string.utf8.count == 101_000)
        #expect(document.expandedBytes == xml.count)
    }

    /// The fuzz seeds of this shape do what their names say, under the fuzz target's limits and the suite's.
    @Test func theStringBombFuzzSeedsAreCurrent() throws {
        func seed(_ name: String) throws -> [UInt8] {
            Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.root + "/Tests/FuzzCorpus/" + name)).dropFirst())
        }
        let fuzz = PropertyListLimits(
            maximumBytes: 2048, maximumObjects: 500, maximumExpandedBytes: 4096, kind: "a fuzz input")
        #expect(Self.refusal(try seed("plist-string-bomb"), limits: fuzz)?.code == .tooManyExpandedBytes)
        let shared = try PropertyListReader(limits: fuzz).decode(try seed("plist-shared-string"), path: "x")
        #expect(shared.expandedBytes == 12 * 100 + "NSAppTransportSecurity".count)
        let suite = try seed("suite-string-bomb")
        #expect(suite.count < 100_000)
        #expect(Self.refusal(suite, limits: .suite)?.code == .tooManyExpandedBytes)
    }

    /// An offset table longer than the object limit is refused before tables sized by it are made: 200
    /// entries that all name one integer (a small file that would make a large count).
    @Test func anOffsetTableOverTheLimitIsRefusedUpFront() throws {
        let limits = PropertyListLimits(
            maximumBytes: 1 << 20, maximumObjects: 100, maximumExpandedBytes: 1 << 20, kind: "a test plist")
        var bytes = Array("bplist00".utf8) + Builder.integer(7)
        let table = bytes.count
        for _ in 0..<200 { bytes += Builder.bigEndian(8, size: 1) }
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + Builder.bigEndian(200, size: 8) + Builder.bigEndian(0, size: 8)
        bytes += Builder.bigEndian(UInt64(table), size: 8)
        #expect(Self.refusal(bytes, limits: limits)?.code == .tooManyObjects)
    }

    @Test func theSizeLimitIsExact() throws {
        let small = PropertyListLimits(
            maximumBytes: 200, maximumObjects: 100, maximumExpandedBytes: 200, kind: "a test plist")
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
