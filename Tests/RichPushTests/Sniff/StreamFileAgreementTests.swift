import CCurlShim
import Foundation
import MagicKit
import TestSupport
import Testing

@testable import CurlKit
@testable import RichPush

/// The download path (the curl sink's kept bytes and media facts, in chunks of any size) and the file
/// path (the file's start in one buffer) read the same input, so they give the same verdict, for the
/// cases that sit on a limit as well as for every sample.
@Suite struct StreamFileAgreementTests {
    let sniffer = TypeSniffer(pool: MagicPool(capacity: 1))

    /// The verdict on `body` fed through a sink in chunks of `chunk` bytes, as a download's would be.
    func streamed(_ body: [UInt8], chunk: Int) throws -> Sniff {
        var sink = rp_sink()
        rp_sink_init(&sink, -1, -1, TypeSniffer.magicWindow, Int64(TypeSniffer.sniffLimit), 0)
        defer { rp_sink_release(&sink) }
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + chunk)
            let accepted = body[offset..<end].withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { rp_sink_feed(&sink, $0.baseAddress, $0.count) }
            }
            #expect(accepted == end - offset)
            offset = end
        }
        return try sniffer.sniff(body: BodySummary(takingFrom: &sink))
    }

    func filed(_ body: [UInt8]) throws -> Sniff {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(body).write(to: URL(fileURLWithPath: folder + "/body"))
        return try sniffer.sniff(fileAt: folder + "/body")
    }

    static func tag(size: Int) -> [UInt8] {
        let syncsafe = [21, 14, 7, 0].map { UInt8((size >> $0) & 0x7f) }
        return Array("ID3".utf8) + [3, 0, 0] + syncsafe + [UInt8](repeating: 0, count: size)
    }

    /// An MPEG-4 sample with an `mdat` box of `padding` bytes between its `ftyp` box and the rest, which
    /// moves its handlers that far.
    static func moved(_ name: String, by padding: Int) throws -> [UInt8] {
        let bytes = try Fixtures.bytes(ofAsset: name)
        let ftypSize = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        let size = 8 + padding
        let mdat = [24, 16, 8, 0].map { UInt8((size >> $0) & 0xff) } + Array("mdat".utf8)
        return Array(bytes[..<ftypSize]) + mdat + [UInt8](repeating: 0, count: padding) + bytes[ftypSize...]
    }

    @Test func agreeOnTheCasesAtTheLimits() throws {
        let mp3 = try Fixtures.bytes(ofAsset: "chime.mp3")
        let frames = Array(mp3.dropFirst(TypeSnifferTestsSupport.id3End(mp3)))
        let limit = TypeSniffer.sniffLimit
        let cases: [(String, [UInt8], String?, Bool?)] = [
            ("a 20 KB tag", Self.tag(size: 20_000) + frames, "mp3", nil),
            ("a tag in the head", Self.tag(size: 1000) + frames, "mp3", nil),
            ("a tag ending just within the scan limit", Self.tag(size: limit - 11) + frames, "mp3", nil),
            ("a tag ending at the scan limit", Self.tag(size: limit - 10) + frames, nil, nil),
            ("a tag and nothing after it", Self.tag(size: 30_000), nil, nil),
            ("a video handler at 500 KB", try Self.moved("clip.mp4", by: 500_000), "mp4", true),
            ("a video handler past the scan limit", try Self.moved("clip.mp4", by: limit), "mp4", false),
            ("an audio-only mp42 with a moved moov", try Self.moved("chime-mp42.m4a", by: 200_000), "mp4", false),
        ]
        for (name, body, format, video) in cases {
            let file = try filed(body)
            #expect(file.formatName == format, "\(name): \(file)")
            #expect(file.hasVideoTrack == video, "\(name): \(file)")
            for chunk in [1000, 16_387, 65_536] {
                #expect(try streamed(body, chunk: chunk) == file, "\(name), chunks of \(chunk)")
            }
        }
    }

    @Test func agreeOnEverySample() throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: Fixtures.assets) {
            let body = try Fixtures.bytes(ofAsset: name)
            let file = try filed(body)
            for chunk in [517, 16_384] {
                #expect(try streamed(body, chunk: chunk) == file, "\(name), chunks of \(chunk)")
            }
        }
    }
}
