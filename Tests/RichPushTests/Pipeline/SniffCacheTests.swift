import AssetServer
import CurlKit
import Foundation
import TestSupport
import Testing

@testable import RichPush

@Suite struct SniffCacheTests {
    static let png = (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.assets + "/hero.png")))) ?? []

    /// A download's summary as the sink keeps it: the first ``TypeSniffer/magicWindow`` bytes.
    func summary(of body: [UInt8], sha256: String? = nil) -> BodySummary {
        var summary = BodySummary()
        summary.head = Array(body.prefix(TypeSniffer.magicWindow))
        summary.sha256 = sha256
        return summary
    }

    @Test func remembersByInputAndStartsOverWhenFull() throws {
        let cache = SniffCache(capacity: 2)
        let jpeg = Sniff(mime: "image/jpeg", description: "", formatName: "jpg", hasVideoTrack: nil, notes: [])
        let gif = Sniff(mime: "image/gif", description: "", formatName: "gif", hasVideoTrack: nil, notes: [])
        let (a, b, c) = (summary(of: [1]), summary(of: [2]), summary(of: [3]))
        func known(_ summary: BodySummary) throws -> Sniff? {
            try TypeSniffer.withInput(of: summary) { cache.sniff(of: $0) }
        }
        func remember(_ sniff: Sniff, _ summary: BodySummary) throws {
            try TypeSniffer.withInput(of: summary) { cache.remember(sniff, of: $0) }
        }
        #expect(try known(a) == nil)
        try remember(jpeg, a)
        try remember(gif, b)
        #expect(try known(a) == jpeg)
        #expect(try known(b) == gif)
        try remember(gif, b)
        #expect(cache.count == 2, "remembering an input again does not start over")
        try remember(gif, c)
        #expect(cache.count == 1)
        #expect(try known(c) == gif)
        #expect(try known(a) == nil)
    }

    @Test func startsOverPastItsBytes() throws {
        let cache = SniffCache(byteCapacity: 3 * TypeSniffer.magicWindow)
        let png = Sniff(mime: "image/png", description: "", formatName: "png", hasVideoTrack: nil, notes: [])
        for byte in UInt8(0)..<4 {
            var head = Self.png
            head[0] = byte
            try TypeSniffer.withInput(of: summary(of: head)) { cache.remember(png, of: $0) }
            #expect(cache.count == Int(byte % 3) + 1)
        }
    }

    /// The key is what the sniffer reads, so bodies that differ only past the head share it, hashed or
    /// not, and the verdict is the one sniffing gives.
    @Test func bodiesWithTheSameHeadSniffOnce() throws {
        #expect(Self.png.count > TypeSniffer.magicWindow + 100)
        var tail = Self.png
        tail[tail.count - 50] ^= 0xff
        let cache = SniffCache()
        let sniffer = TypeSniffer()
        let first = try cache.sniff(body: summary(of: Self.png), with: sniffer)
        let second = try cache.sniff(body: summary(of: tail, sha256: "a hash"), with: sniffer)
        let third = try cache.sniff(body: summary(of: tail, sha256: "another hash"), with: sniffer)
        #expect(cache.sniffed == 1)
        #expect(first == second && second == third)
        #expect(first == (try sniffer.sniff(bytes: Self.png)))
        #expect(first.formatName == "png")
    }

    /// One byte of the head, anywhere in it, or one media fact makes another input, sniffed on its own.
    @Test func inputsThatDifferInOneByteOrFactAreSniffedSeparately() throws {
        let cache = SniffCache()
        let sniffer = TypeSniffer()
        _ = try cache.sniff(body: summary(of: Self.png), with: sniffer)
        var expected = 1
        // The last byte, one in the middle (outside the fingerprint's 256 bytes at each end), one inside it.
        for position in [TypeSniffer.magicWindow - 1, TypeSniffer.magicWindow / 2, 200] {
            var changed = Self.png
            changed[position] ^= 0x01
            _ = try cache.sniff(body: summary(of: changed), with: sniffer)
            expected += 1
            #expect(cache.sniffed == expected, "a byte at \(position)")
        }
        var shorter = summary(of: Self.png)
        shorter.head.removeLast()
        var video = summary(of: Self.png)
        video.videoHandler = true
        var tagged = summary(of: Self.png)
        tagged.tagEnd = 100
        var tail = tagged
        tail.afterTag = [0xff, 0xfb]
        var otherTail = tagged
        otherTail.afterTag = [0xff, 0xfa]
        for summary in [shorter, video, tagged, tail, otherTail] {
            _ = try cache.sniff(body: summary, with: sniffer)
            expected += 1
            #expect(cache.sniffed == expected)
        }
        for summary in [shorter, video, tagged, tail, otherTail] { _ = try cache.sniff(body: summary, with: sniffer) }
        #expect(cache.sniffed == expected, "each seen again is a hit")
    }

    /// The same bytes under different URLs are sniffed once; the answer is the one sniffing gives.
    @Test func theSameContentUnderAnotherURLGetsTheSameSniff() async throws {
        let rig = try LocalRig(loops: 1)
        defer { rig.cleanUp() }
        let service = ServiceExtension(
            engine: rig.engine, store: try AttachmentStore(folder: rig.folder),
            policy: Fixtures.extensionPolicy(mapping: rig.server, budget: .seconds(60)))
        func payload(_ query: String) -> [UInt8] {
            Array(
                #"{"aps":{"alert":"hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/clip.mp4?\#(query)","type":"mp4"}}}"#
                    .utf8)
        }
        let first = await service.process(payload("delay=0")).outcome
        let second = await service.process(payload("delay=1")).outcome
        #expect(first.verdict == .attached && second.verdict == .attached)
        #expect(service.sniffs.count == 1)
        #expect(service.sniffs.sniffed == 1)
        #expect(second.sniff == first.sniff)
        let path = try #require(first.attachment?.file)
        #expect(first.sniff == (try TypeSniffer().sniff(fileAt: path)))
    }

    /// A bench without an output folder hashes no body: two assets with the same head still sniff once,
    /// and one whose head differs in a byte is sniffed again.
    @Test func withoutAStoreTwoAssetsWithTheSameHeadSniffOnce() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var tail = Self.png
        tail[tail.count - 50] ^= 0xff
        var head = Self.png
        head[TypeSniffer.magicWindow - 1] ^= 0x01
        for (name, bytes) in [("a.png", Self.png), ("b.png", tail), ("c.png", head)] {
            try Data(bytes).write(to: URL(fileURLWithPath: folder + "/" + name))
        }
        let server = try Fixtures.startServer(root: folder)
        defer { server.stop() }
        let engine = try FetchEngine(loops: 1)
        defer { engine.shutdown() }
        let service = ServiceExtension(
            engine: engine, store: nil, policy: Fixtures.extensionPolicy(mapping: server, budget: .seconds(60)))
        func payload(_ name: String) -> [UInt8] {
            Array(
                #"{"aps":{"alert":"hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/\#(name)","type":"png"}}}"#
                    .utf8)
        }
        let a = await service.process(payload("a.png")).outcome
        let b = await service.process(payload("b.png")).outcome
        #expect(a.verdict == .attached && b.verdict == .attached, "\(a.message) / \(b.message)")
        #expect(service.sniffs.sniffed == 1)
        let c = await service.process(payload("c.png")).outcome
        #expect(c.verdict == .attached, "\(c.message)")
        #expect(service.sniffs.sniffed == 2)
        #expect(a.sniff == b.sniff && b.sniff?.formatName == "png")
    }
}
