import CCurlShim
import Testing

@testable import CurlKit

/// The body sink alone, fed as libcurl would feed it: in chunks of any size.
@Suite struct BodySinkTests {
    /// Feeds `body` in chunks of `chunk` bytes and returns (video handler seen, head kept, bytes).
    func feed(_ body: [UInt8], chunk: Int, scanLimit: Int64 = 1 << 20, headLimit: Int = 64) -> (Bool, [UInt8], Int64) {
        var sink = rp_sink()
        rp_sink_init(&sink, -1, -1, headLimit, scanLimit, 0)
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
        let head = sink.head.map { Array(UnsafeBufferPointer(start: $0, count: sink.head_length)) } ?? []
        return (sink.media.video_handler != 0, head, sink.bytes)
    }

    /// `hdlr`, version and flags, pre_defined, then the handler type.
    func handler(_ type: String) -> [UInt8] { Array("hdlr".utf8) + [UInt8](repeating: 0, count: 8) + Array(type.utf8) }

    /// An MPEG-4 file's first box: size 16, `ftyp`, major brand, minor version.
    let ftyp: [UInt8] = [0, 0, 0, 16] + Array("ftypisom".utf8) + [0, 0, 0, 0]

    @Test func findsAVideoHandlerWhereverTheChunksSplitIt() {
        for position in [0, 1, 7, 14, 15, 16, 100, 4093] {
            let body =
                ftyp + [UInt8](repeating: 0x61, count: position) + handler("vide") + [UInt8](repeating: 0x62, count: 40)
            for chunk in [1, 2, 3, 5, 15, 16, 17, 4096] {
                #expect(feed(body, chunk: chunk).0, "handler at \(position), chunks of \(chunk)")
            }
        }
    }

    @Test func ignoresASoundHandlerAndAHandlerPastTheScanLimit() {
        let sound = ftyp + [UInt8](repeating: 0, count: 20) + handler("soun") + [UInt8](repeating: 0, count: 20)
        for chunk in [1, 4, 16, 1000] { #expect(!feed(sound, chunk: chunk).0) }
        // The 16 bytes must lie within the limit.
        let late = ftyp + [UInt8](repeating: 0, count: 74) + handler("vide")
        #expect(!feed(late, chunk: 7, scanLimit: 100).0)
        #expect(feed(late, chunk: 7, scanLimit: 106).0)
        // A handler cut in two by the end of the body is not one.
        #expect(!feed(ftyp + [UInt8](repeating: 0, count: 5) + Array(handler("vide").prefix(15)), chunk: 3).0)
    }

    /// The sniffer reads the handler only for a body that starts with an `ftyp` box: for any other
    /// body none is looked for, however the first bytes arrive.
    @Test func looksForAHandlerOnlyInABodyThatStartsWithAnFtypBox() {
        let video = [UInt8](repeating: 0, count: 20) + handler("vide")
        for chunk in [1, 3, 8, 64] {
            #expect(!feed(Array("RIFF....AVI ".utf8) + video, chunk: chunk).0, "chunks of \(chunk)")
            #expect(feed(ftyp + video, chunk: chunk).0, "chunks of \(chunk)")
        }
    }

    @Test func keepsTheHeadAndCountsEveryByte() {
        let body = (0..<1000).map { UInt8($0 % 251) }
        for chunk in [1, 63, 64, 65, 1000] {
            let (_, head, bytes) = feed(body, chunk: chunk)
            #expect(head == Array(body.prefix(64)))
            #expect(bytes == 1000)
        }
    }
}

/// What a finished transfer's summary takes from its sink: the kept buffers themselves, not copies.
@Suite struct BodySummaryTakingTests {
    @Test func takesTheKeptBuffersWithoutCopyingThem() {
        var sink = rp_sink()
        rp_sink_init(&sink, -1, -1, 64, 1 << 20, 1)
        defer { rp_sink_release(&sink) }
        let tagged: [UInt8] =
            Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, 20] + [UInt8](repeating: 0, count: 20) + [0xff, 0xfb]
        let accepted = tagged.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { rp_sink_feed(&sink, $0.baseAddress, $0.count) }
        }
        #expect(accepted == tagged.count)
        let head = UnsafeRawPointer(sink.head)
        let afterTag = UnsafeRawPointer(sink.after_tag)
        let summary = BodySummary(takingFrom: &sink)
        #expect(sink.head == nil && sink.head_length == 0 && sink.after_tag == nil, "the sink let go of them")
        #expect(summary.keptHead.withUnsafeBytes { $0.baseAddress } == head)
        #expect(summary.keptAfterTag?.withUnsafeBytes { $0.baseAddress } == afterTag)
        #expect(summary.head == tagged)
        #expect(summary.afterTag == [0xff, 0xfb])
        #expect(summary.tagEnd == 30)
        #expect(!summary.videoHandler)
        #expect(summary.sha256?.count == 64)
    }

    @Test func anArrayAndATakenBufferWithTheSameBytesAreEqual() {
        var sink = rp_sink()
        rp_sink_init(&sink, -1, -1, 64, 0, 0)
        defer { rp_sink_release(&sink) }
        let body = Array("GIF89a".utf8)
        _ = body.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { rp_sink_feed(&sink, $0.baseAddress, $0.count) }
        }
        var copied = BodySummary()
        copied.head = body
        #expect(BodySummary(takingFrom: &sink) == copied)
        #expect(BodySummary(takingFrom: &sink) == BodySummary(), "nothing is left to take twice")
    }
}
