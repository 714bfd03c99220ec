import Foundation
import TestSupport
import Testing

@testable import AssetServer

/// Edge mode: an LRU of request targets in front of the folder, answering with Cache-Status.
@Suite struct EdgeCacheTests {
    @Test func theLRUEvictsTheLeastRecentlyUsed() {
        var lru = EdgeCache.LRU(capacity: 2)
        let now = ContinuousClock.now
        lru.insert("/a", ready: now)
        lru.insert("/b", ready: now)
        #expect(lru.touch("/a") == now)
        lru.insert("/c", ready: now)
        #expect(lru.holds("/a") && lru.holds("/c") && !lru.holds("/b"))
        lru.insert("/d", ready: now)
        #expect(lru.holds("/c") && lru.holds("/d") && !lru.holds("/a"))
        #expect(lru.count == 2)
    }

    @Test func aRequestDuringTheFillIsCollapsedIntoIt() {
        let cache = EdgeCache(EdgeOptions(capacity: 10, fill: .seconds(2)))
        let start = ContinuousClock.now
        #expect(cache.lookup("/hero.jpg", now: start) == .miss(ready: start + .seconds(2)))
        #expect(cache.lookup("/hero.jpg", now: start + .seconds(1)) == .hit(ready: start + .seconds(2), ageSeconds: 0))
        #expect(cache.lookup("/hero.jpg", now: start + .seconds(7)) == .hit(ready: start + .seconds(2), ageSeconds: 5))
        #expect(cache.lookup("/hero.jpg?v=2", now: start) == .miss(ready: start + .seconds(2)))
        #expect(cache.counts.hits == 2 && cache.counts.misses == 2)
    }

    @Test func theServerAnswersWithCacheStatusAndAge() throws {
        let server = try AssetServer(root: Fixtures.assets, edge: EdgeOptions(capacity: 2, fill: .milliseconds(300)))
        defer { server.stop() }
        let started = ContinuousClock.now
        let miss = try #require(try RawHTTP.get("/hero.jpg", port: server.httpPort))
        // A miss is answered once the fill is done, never sooner.
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(miss.status == 200 && miss.headers["cache-status"] == "richpush-edge; fwd=uri-miss; stored")
        #expect(miss.body == (try Fixtures.bytes(ofAsset: "hero.jpg")))
        let hit = try #require(try RawHTTP.get("/hero.jpg", port: server.httpPort))
        #expect(hit.headers["cache-status"] == "richpush-edge; hit")
        // Whole seconds since the fill ended, which came after `started`: no more than this test has run
        // (0 unless a loaded machine took a second or more since).
        let age = try #require(hit.headers["age"].flatMap { Int($0) }, "\(hit.headers)")
        #expect(age >= 0 && Duration.seconds(age) <= ContinuousClock.now - started, "Age: \(age)")
        #expect(hit.body == miss.body)
        // The query is part of the key; the least recently used object is evicted past the capacity.
        _ = try RawHTTP.get("/hero.jpg?v=1", port: server.httpPort)
        _ = try RawHTTP.get("/hero.jpg?v=2", port: server.httpPort)
        let evicted = try #require(try RawHTTP.get("/hero.jpg", port: server.httpPort))
        #expect(evicted.headers["cache-status"]?.contains("fwd=uri-miss") == true)
        #expect(server.edgeCounts.map { [$0.hits, $0.misses] } == [1, 4])
    }

    @Test func withoutEdgeModeNothingIsCached() throws {
        let server = try Fixtures.startServer()
        defer { server.stop() }
        let response = try #require(try RawHTTP.get("/hero.jpg", port: server.httpPort))
        #expect(response.headers["cache-status"] == nil && response.headers["cache-control"] == "no-store")
        #expect(server.edgeCounts == nil)
    }
}
