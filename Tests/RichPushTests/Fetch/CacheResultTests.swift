import RichPush
import Testing

/// Cache results from the headers CDNs write, in the order they are trusted.
@Suite struct CacheResultTests {
    @Test(arguments: [
        (["Cache-Status": "ExampleCDN; hit"], CacheResult.hit),
        (["Cache-Status": "OriginCache; hit, ExampleCDN; fwd=uri-miss; stored"], .miss),
        (["Cache-Status": "OriginCache; fwd=miss, ExampleCDN; hit; ttl=30"], .hit),
        (["Cache-Status": "ExampleCDN; fwd=stale; fwd-status=304"], .miss),
        (["Cache-Status": "ExampleCDN; fwd=bypass"], .bypass),
        (["Cache-Status": "ExampleCDN; fwd=\"vary-miss\""], .miss),
        (["CF-Cache-Status": "HIT"], .hit), (["CF-Cache-Status": "EXPIRED"], .miss),
        (["CF-Cache-Status": "DYNAMIC"], .bypass), (["CF-Cache-Status": "REVALIDATED"], .miss),
        (["X-Cache": "Hit from cloudfront"], .hit), (["X-Cache": "Miss from cloudfront"], .miss),
        (["X-Cache": "HIT, MISS"], .miss), (["X-Cache": "MISS, HIT"], .hit), (["X-Cache": "TCP_HIT"], .hit),
        (["Age": "120"], .hit), (["Age": "0"], .none), (["Age": "soon"], .none), ([:], .none),
        (["X-Cache": "something else"], .none),
        // Cache-Status outranks the others; an unreadable one leaves them to decide.
        (["Cache-Status": "ExampleCDN; fwd=uri-miss", "Age": "40"], .miss),
        (["Cache-Status": "ExampleCDN", "CF-Cache-Status": "HIT"], .hit),
    ])
    func readsTheHeader(_ headers: [String: String], _ expected: CacheResult) {
        #expect(CacheResult(headers: headers) == expected)
    }
}
