import Foundation
import TestSupport
import Testing

@testable import RichPush

@Suite struct SniffCacheTests {
    @Test func remembersBySHA256AndStartsOverWhenFull() {
        let cache = SniffCache(capacity: 2)
        let jpeg = Sniff(mime: "image/jpeg", description: "", formatName: "jpg", hasVideoTrack: nil, notes: [])
        let gif = Sniff(mime: "image/gif", description: "", formatName: "gif", hasVideoTrack: nil, notes: [])
        #expect(cache.sniff(ofContent: "a") == nil)
        cache.remember(jpeg, ofContent: "a")
        cache.remember(gif, ofContent: "b")
        #expect(cache.sniff(ofContent: "a") == jpeg)
        #expect(cache.sniff(ofContent: "b") == gif)
        cache.remember(jpeg, ofContent: "b")
        #expect(cache.count == 2, "replacing an entry does not start over")
        cache.remember(gif, ofContent: "c")
        #expect(cache.count == 1)
        #expect(cache.sniff(ofContent: "c") == gif)
    }

    /// The same bytes under different URLs are sniffed once; the answer is the one sniffing gives.
    @Test func theSameContentUnderAnotherURLGetsTheSameSniff() async throws {
        let rig = try LocalRig(loops: 1)
        defer { rig.cleanUp() }
        let service = ServiceExtension(
            engine: rig.engine, store: try AttachmentStore(folder: rig.folder),
            policy: Fixtures.extensionPolicy(mapping: rig.server, budget: .seconds(10)))
        func payload(_ query: String) -> [UInt8] {
            Array(
                #"{"aps":{"alert":"hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/clip.mp4?\#(query)","type":"mp4"}}}"#
                    .utf8)
        }
        let first = await service.process(payload("delay=0")).outcome
        let second = await service.process(payload("delay=1")).outcome
        #expect(first.verdict == .attached && second.verdict == .attached)
        #expect(service.sniffs.count == 1)
        #expect(second.sniff == first.sniff)
        let path = try #require(first.attachment?.file)
        #expect(first.sniff == (try TypeSniffer().sniff(fileAt: path)))
    }
}
