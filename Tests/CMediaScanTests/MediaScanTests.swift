import CMediaScan
import Testing

/// Boxes and tags built byte by byte, for the C scanner alone.
enum Media {
    static func bigEndian(_ value: UInt64, bytes: Int) -> [UInt8] {
        (0..<bytes).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// A box with a 32-bit size (its real one unless `size` is given).
    static func box(_ type: String, _ payload: [UInt8], size: UInt32? = nil) -> [UInt8] {
        bigEndian(UInt64(size ?? UInt32(8 + payload.count)), bytes: 4) + Array(type.utf8) + payload
    }

    /// A box with size 1 and a 64-bit size after its type (its real one unless `size` is given).
    static func largeBox(_ type: String, _ payload: [UInt8], size: UInt64? = nil) -> [UInt8] {
        bigEndian(1, bytes: 4) + Array(type.utf8) + bigEndian(size ?? UInt64(16 + payload.count), bytes: 8) + payload
    }

    static func ftyp(_ major: String = "isom", compatible: [String] = ["isom", "mp41"]) -> [UInt8] {
        box("ftyp", Array(major.utf8) + [0, 0, 2, 0] + compatible.flatMap { Array($0.utf8) })
    }

    /// A handler box: version and flags, pre_defined, the handler type, reserved, an empty name.
    static func hdlr(_ type: String) -> [UInt8] {
        box("hdlr", [UInt8](repeating: 0, count: 8) + Array(type.utf8) + [UInt8](repeating: 0, count: 13))
    }

    /// moov/trak/mdia/hdlr, with a header box before the handler as real files have.
    static func moov(handlers: [String]) -> [UInt8] {
        box(
            "moov",
            box("mvhd", [UInt8](repeating: 0, count: 100))
                + handlers.flatMap { handler in
                    box(
                        "trak",
                        box("tkhd", [UInt8](repeating: 0, count: 84))
                            + box("mdia", box("mdhd", [UInt8](repeating: 0, count: 24)) + hdlr(handler)))
                })
    }

    /// An ID3v2 tag header with `size` in four 7-bit bytes, flags as given, then `size` bytes of frames.
    static func id3(size: Int, flags: UInt8 = 0) -> [UInt8] {
        let syncsafe = [
            UInt8((size >> 21) & 0x7f), UInt8((size >> 14) & 0x7f), UInt8((size >> 7) & 0x7f), UInt8(size & 0x7f),
        ]
        return Array("ID3".utf8) + [4, 0, flags] + syncsafe + [UInt8](repeating: 0x54, count: size)
    }

    static let mpegFrames: [UInt8] = [0xff, 0xfb, 0x90, 0x64] + [UInt8](repeating: 0x55, count: 400)
}

struct ScanAnswer: Equatable, CustomStringConvertible {
    var tagEnd: Int64
    var videoHandler: Bool
    var notMPEG4: Bool
    var seen: Int64
    var description: String { "tag_end \(tagEnd), video \(videoHandler), not_mpeg4 \(notMPEG4), seen \(seen)" }

    init(_ scan: rp_media_scan) {
        tagEnd = scan.tag_end
        videoHandler = scan.video_handler != 0
        notMPEG4 = scan.not_mpeg4 != 0
        seen = scan.seen
    }

    static func whole(_ bytes: [UInt8], limit: Int64 = 1 << 20) -> ScanAnswer {
        var scan = rp_media_scan()
        bytes.withUnsafeBufferPointer { rp_media_scan_buffer(&scan, $0.baseAddress, $0.count, limit) }
        return ScanAnswer(scan)
    }

    /// Feeds `bytes` in pieces that end at each of `cuts` (sorted offsets), then the rest.
    static func split(_ bytes: [UInt8], at cuts: [Int], limit: Int64 = 1 << 20) -> ScanAnswer {
        var scan = rp_media_scan()
        rp_media_scan_init(&scan, limit)
        var from = 0
        for cut in cuts + [bytes.count] where cut >= from {
            bytes[from..<cut].withUnsafeBufferPointer { rp_media_scan_feed(&scan, $0.baseAddress, $0.count) }
            from = cut
        }
        return ScanAnswer(scan)
    }

    static func chunks(_ bytes: [UInt8], of size: Int, limit: Int64 = 1 << 20) -> ScanAnswer {
        split(bytes, at: Array(stride(from: size, to: bytes.count, by: size)), limit: limit)
    }
}

@Suite struct ID3TagEndTests {
    func end(_ bytes: [UInt8]) -> Int64 {
        bytes.withUnsafeBufferPointer { rp_id3_tag_end($0.baseAddress, $0.count) }
    }

    @Test func isTheHeaderPlusTheSyncsafeSizePlusAFooterWhenFlagged() {
        #expect(end(Media.id3(size: 0)) == 10)
        #expect(end(Media.id3(size: 20_000)) == 20_010)
        #expect(end(Media.id3(size: 20_000, flags: 0x10)) == 20_020)
        #expect(end(Media.id3(size: 127, flags: 0xef)) == 137, "flags other than the footer's change nothing")
        // The largest size four 7-bit bytes hold, and bytes whose high bit is set (read as 7 bits each).
        #expect(end(Array("ID3".utf8) + [4, 0, 0x10, 0x7f, 0x7f, 0x7f, 0x7f]) == 10 + (1 << 28) - 1 + 10)
        #expect(end(Array("ID3".utf8) + [4, 0, 0, 0xff, 0xff, 0xff, 0xff]) == 10 + (1 << 28) - 1)
        #expect(end(Array("ID3".utf8) + [4, 0, 0, 0x80, 0x80, 0x80, 0x81]) == 11)
    }

    @Test func isUnknownWithoutAWholeHeaderOrTheSignature() {
        let header = Array(Media.id3(size: 300).prefix(10))
        for length in 0..<10 { #expect(end(Array(header.prefix(length))) == -1, "\(length) bytes") }
        #expect(end(Array("ID2".utf8) + header.dropFirst(3)) == -1)
        #expect(end(Array("id3".utf8) + header.dropFirst(3)) == -1)
        #expect(end(Media.mpegFrames) == -1)
    }
}

@Suite struct MPEG4BrandsTests {
    func brands(_ bytes: [UInt8]) -> (major: String, compatible: [String])? {
        var brands = rp_mpeg4_brands()
        let found = bytes.withUnsafeBufferPointer { rp_mpeg4_brands_of($0.baseAddress, $0.count, &brands) }
        guard found != 0 else { return nil }
        let major = withUnsafeBytes(of: brands.major) { String(decoding: $0, as: UTF8.self) }
        let compatible = (0..<brands.compatible_count).map { index in
            let at = brands.compatible_offset + 4 * index
            return String(decoding: bytes[at..<(at + 4)], as: UTF8.self)
        }
        return (major, compatible)
    }

    @Test func readsTheMajorAndCompatibleBrands() throws {
        let read = try #require(
            brands(Media.ftyp("M4A ", compatible: ["M4A ", "mp42", "isom"]) + Media.moov(handlers: ["soun"])))
        #expect(read.major == "M4A ")
        #expect(read.compatible == ["M4A ", "mp42", "isom"])
    }

    @Test func readsALargesizeBoxAndAZeroSizeBox() throws {
        let large = try #require(
            brands(Media.largeBox("ftyp", Array("mp42".utf8) + [0, 0, 0, 0] + Array("mp42isom".utf8))))
        #expect(large.major == "mp42")
        #expect(large.compatible == ["mp42", "isom"])
        // Size 0: the box runs to the end of the bytes.
        let open = try #require(
            brands(Media.box("ftyp", Array("isom".utf8) + [0, 0, 0, 0] + Array("avc1".utf8), size: 0)))
        #expect(open.major == "isom")
        #expect(open.compatible == ["avc1"])
    }

    @Test func cutsSizesAtTheBytesAndNeverReadsPastThem() throws {
        let body = Media.ftyp("isom", compatible: ["isom", "iso2"])
        // A size past the bytes (up to the 32-bit and 64-bit maxima): the brands the bytes hold.
        for size: UInt32 in [33, 1000, .max] {
            let read = try #require(brands(Array(Media.box("ftyp", Array(body.dropFirst(8)), size: size))))
            #expect(read.compatible == ["isom", "iso2"], "size \(size)")
        }
        for size: UInt64 in [1 << 40, .max, .max - 7] {
            let read = try #require(brands(Media.largeBox("ftyp", Array(body.dropFirst(8)), size: size)))
            #expect(read.major == "isom" && read.compatible == ["isom", "iso2"], "size \(size)")
        }
        // A size too small to hold the brands: the major brand, no compatible ones.
        for size: UInt32 in [2, 8, 15, 16, 19] {
            let read = try #require(brands(Media.box("ftyp", Array(body.dropFirst(8)), size: size)))
            #expect(read.major == "isom" && read.compatible.isEmpty, "size \(size)")
        }
        // Truncated: every prefix shorter than the major brand and minor version has no brands; a brand
        // cut by the end of the bytes is not one.
        for length in 0..<16 { #expect(brands(Array(body.prefix(length))) == nil, "\(length) bytes") }
        #expect(try #require(brands(Array(body.prefix(23)))).compatible == ["isom"])
        let large = Media.largeBox("ftyp", Array(body.dropFirst(8)))
        for length in 0..<24 { #expect(brands(Array(large.prefix(length))) == nil, "largesize, \(length) bytes") }
        #expect(brands(Media.box("free", Array(body.dropFirst(8)))) == nil)
    }
}

@Suite struct MediaScanTests {
    static let video = Media.ftyp() + Media.moov(handlers: ["soun", "vide"]) + Media.box("mdat", Media.mpegFrames)
    static let audio = Media.ftyp("M4A ") + Media.moov(handlers: ["soun"]) + Media.box("mdat", Media.mpegFrames)

    @Test func findsAVideoHandlerNestedInMoovTrakMdia() {
        #expect(ScanAnswer.whole(Self.video).videoHandler)
        #expect(!ScanAnswer.whole(Self.audio).videoHandler)
        #expect(!ScanAnswer.whole(Self.audio).notMPEG4)
        // The moov after a large mdat, as cameras write it, and after a 64-bit mdat.
        let late =
            Media.ftyp() + Media.box("mdat", [UInt8](repeating: 0x68, count: 70_000)) + Media.moov(handlers: ["vide"])
        #expect(ScanAnswer.whole(late).videoHandler)
        let large = Media.ftyp() + Media.largeBox("mdat", Media.mpegFrames) + Media.moov(handlers: ["vide"])
        #expect(ScanAnswer.whole(large).videoHandler)
    }

    /// No box size, however wrong, hides a handler or invents one: the handler is read as its 16 bytes.
    @Test func noBoxSizeHidesOrInventsAHandler() {
        for size: UInt32 in [0, 1, 7, 8, 0x7fff_ffff, .max] {
            let body = Media.ftyp() + Media.box("mdat", Media.mpegFrames, size: size) + Media.moov(handlers: ["vide"])
            #expect(ScanAnswer.whole(body).videoHandler, "mdat size \(size)")
            let audio = Media.ftyp() + Media.box("mdat", Media.mpegFrames, size: size) + Media.moov(handlers: ["soun"])
            #expect(!ScanAnswer.whole(audio).videoHandler, "mdat size \(size)")
        }
        for size: UInt64 in [0, 16, 1 << 63, .max] {
            let body =
                Media.ftyp() + Media.largeBox("mdat", Media.mpegFrames, size: size) + Media.moov(handlers: ["vide"])
            #expect(ScanAnswer.whole(body).videoHandler, "64-bit mdat size \(size)")
        }
        // A zero-size ftyp still starts an MPEG-4 file; a handler cut by the end of the bytes is not one.
        #expect(
            ScanAnswer.whole(
                Media.box("ftyp", Array("isom".utf8) + [0, 0, 0, 0], size: 0) + Media.moov(handlers: ["vide"])
            ).videoHandler)
        // The box starts 4 bytes before 'hdlr'; its 16 bytes from 'hdlr' on end 20 bytes into it.
        let handler = Media.hdlr("vide")
        for keep in 0..<20 { #expect(!ScanAnswer.whole(Media.ftyp() + Array(handler.prefix(keep))).videoHandler) }
        #expect(ScanAnswer.whole(Media.ftyp() + Array(handler.prefix(20))).videoHandler)
    }

    @Test func looksOnlyInABodyThatStartsWithAnFtypBoxAndWithinTheLimit() {
        let riff = Array("RIFF\u{0}\u{0}\u{0}\u{0}AVI ".utf8) + Media.moov(handlers: ["vide"])
        #expect(!ScanAnswer.whole(riff).videoHandler)
        #expect(ScanAnswer.whole(riff).notMPEG4)
        // The handler's 16 bytes must lie within the limit.
        let body = Media.ftyp() + Media.moov(handlers: ["vide"])
        let at = Int64(body.count - 29)  // where 'hdlr' starts: the box (33 bytes) ends the body
        #expect(Array(body[Int(at)..<Int(at) + 4]) == Array("hdlr".utf8))
        #expect(!ScanAnswer.whole(body, limit: at + 15).videoHandler)
        #expect(ScanAnswer.whole(body, limit: at + 16).videoHandler)
        #expect(!ScanAnswer.whole(body, limit: 0).videoHandler)
    }

    @Test func findsTheTagEndOnceItsHeaderIsIn() {
        let tagged = Media.id3(size: 600, flags: 0x10) + Array(repeating: 0, count: 10) + Media.mpegFrames
        #expect(ScanAnswer.whole(tagged).tagEnd == 620)
        #expect(ScanAnswer.whole(tagged).notMPEG4)
        #expect(ScanAnswer.whole(Array(tagged.prefix(9))).tagEnd == -1)
        #expect(ScanAnswer.whole(Array(tagged.prefix(10))).tagEnd == 620)
        #expect(ScanAnswer.whole(Media.mpegFrames).tagEnd == -1)
        #expect(ScanAnswer.whole([]) == ScanAnswer.split([], at: []))
    }

    /// The sink's chunks and the file's one buffer give the same answers, wherever the bytes are cut.
    static let splitBodies: [(String, [UInt8])] = {
        let tagged: [UInt8] = Media.id3(size: 300, flags: 0x10) + [UInt8](repeating: 0, count: 10) + Media.mpegFrames
        let taggedMPEG4: [UInt8] = Media.id3(size: 40) + Media.ftyp() + Media.moov(handlers: ["vide"])
        let riff: [UInt8] = Array("RIFF\u{0}\u{0}\u{0}\u{0}AVI ".utf8) + Media.moov(handlers: ["vide"])
        let short: [UInt8] = Array(Media.ftyp().prefix(9))
        return [
            ("video", video), ("audio", audio), ("tagged", tagged), ("tagged mpeg-4", taggedMPEG4), ("riff", riff),
            ("short", short),
        ]
    }()

    @Test(arguments: splitBodies)
    func answersTheSameForEverySplit(name: String, body: [UInt8]) {
        let limits: [Int64] = [1 << 20, Int64(body.count) - 20, 12]
        for limit in limits {
            let whole = ScanAnswer.whole(body, limit: limit)
            for cut in 0...body.count {
                #expect(
                    ScanAnswer.split(body, at: [cut], limit: limit) == whole, "\(name): cut at \(cut), limit \(limit)")
            }
            for first in stride(from: 0, through: min(body.count, 40), by: 1) {
                for second in stride(from: first, through: body.count, by: 7) {
                    #expect(
                        ScanAnswer.split(body, at: [first, second], limit: limit) == whole,
                        "\(name): cuts at \(first) and \(second), limit \(limit)")
                }
            }
            for size in [1, 2, 3, 5, 15, 16, 17, 64] {
                #expect(
                    ScanAnswer.chunks(body, of: size, limit: limit) == whole,
                    "\(name): chunks of \(size), limit \(limit)")
            }
        }
    }
}
