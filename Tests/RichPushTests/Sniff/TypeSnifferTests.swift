import Foundation
import MagicKit
import RichPush
import TestSupport
import Testing

/// Sniffing every sample asset, and the cases libmagic alone gets wrong.
@Suite struct TypeSnifferTests {
    let sniffer = TypeSniffer(pool: MagicPool(capacity: 2))

    /// file, MIME libmagic 5.44 reports, the supported format it maps to (nil: unsupported).
    static let samples: [(String, String, String?)] = [
        ("hero.jpg", "image/jpeg", "jpeg"),
        ("hero.png", "image/png", "png"),
        ("banner.gif", "image/gif", "gif"),
        ("large-banner.gif", "image/gif", "gif"),
        ("chime.mp3", "audio/mpeg", "mp3"),
        ("chime.m4a", "audio/x-m4a", "m4a"),
        ("chime-mp42.m4a", "video/mp4", "mp4"),
        ("chime.wav", "audio/x-wav", "wav"),
        ("chime.aiff", "audio/x-aiff", "aiff"),
        ("clip.mp4", "video/mp4", "mp4"),
        ("clip.mpg", "video/mpeg", "mpeg"),
        ("clip.avi", "video/x-msvideo", "avi"),
        ("hero.webp", "image/webp", nil),
        ("hero.heic", "image/heic", nil),
        ("error.html", "text/html", nil),
    ]

    @Test(arguments: samples)
    func sniffsEverySampleAsset(file: String, mime: String, format: String?) throws {
        let sniff = try sniffer.sniff(fileAt: Fixtures.assets + "/" + file)
        #expect(sniff.mime == mime)
        #expect(sniff.formatName == format)
    }

    @Test func everySampleAssetIsCovered() {
        let listed = Set(Self.samples.map(\.0))
        #expect(Set(Fixtures.files(in: Fixtures.assets)) == listed)
    }

    @Test func describesImageDimensions() throws {
        let sniff = try sniffer.sniff(fileAt: Fixtures.assets + "/hero.png")
        #expect(sniff.description.contains("600 x 300"))
    }

    @Test func tellsAudioOnlyMPEG4FromVideo() throws {
        #expect(try sniffer.sniff(fileAt: Fixtures.assets + "/chime-mp42.m4a").hasVideoTrack == false)
        #expect(try sniffer.sniff(fileAt: Fixtures.assets + "/clip.mp4").hasVideoTrack == true)
        #expect(try sniffer.sniff(fileAt: Fixtures.assets + "/hero.jpg").hasVideoTrack == nil)
    }

    @Test func findsMP3FramesBehindALargeID3Tag() throws {
        // A 20 KB ID3v2 tag (syncsafe size) in front of the sample's audio frames.
        let mp3 = try Fixtures.bytes(ofAsset: "chime.mp3")
        let frames = Array(mp3.dropFirst(TypeSnifferTestsSupport.id3End(mp3)))
        let tagSize = 20_000
        let header: [UInt8] = [
            0x49, 0x44, 0x33, 3, 0, 0, UInt8((tagSize >> 21) & 0x7f), UInt8((tagSize >> 14) & 0x7f),
            UInt8((tagSize >> 7) & 0x7f), UInt8(tagSize & 0x7f),
        ]
        let tagged = header + [UInt8](repeating: 0, count: tagSize) + frames
        let sniff = try sniffer.sniff(bytes: tagged)
        #expect(sniff.formatName == "mp3")
        #expect(sniff.mime == "audio/mpeg")
    }

    @Test func reportsGzipAsGzipWithoutLookingInside() throws {
        let gzip: [UInt8] = [0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03] + [UInt8](repeating: 0, count: 20)
        let sniff = try sniffer.sniff(bytes: gzip)
        #expect(sniff.mime == "application/gzip")
        #expect(sniff.format == nil)
    }

    @Test func reportsAnEmptyFile() throws {
        let sniff = try sniffer.sniff(bytes: [])
        #expect(sniff.mime == "application/x-empty")
        #expect(sniff.format == nil)
    }

    @Test func failsClearlyOnAMissingFile() {
        #expect(throws: SniffError.self) { try sniffer.sniff(fileAt: "/nonexistent/richpush/file.jpg") }
    }

    @Test func sniffsFromManyThreadsAtOnce() async throws {
        let bytes = try Fixtures.bytes(ofAsset: "hero.png")
        let sniffer = self.sniffer
        let answers = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<64 { group.addTask { try? sniffer.sniff(bytes: bytes).mime } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 64 && answers.allSatisfy { $0 == "image/png" })
    }
}

enum TypeSnifferTestsSupport {
    /// Where the sample MP3's own ID3 tag ends.
    static func id3End(_ bytes: [UInt8]) -> Int {
        guard bytes.count > 10, bytes[0] == 0x49 else { return 0 }
        return 10 + bytes[6..<10].reduce(0) { ($0 << 7) | Int($1 & 0x7f) }
    }
}
