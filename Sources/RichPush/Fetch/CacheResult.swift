import Foundation

/// Whether a cache between the device and the origin answered a download, read from the response's
/// headers as a CDN writes them.
///
/// The headers, in the order they are trusted:
/// - `Cache-Status` (RFC 9211): a list of caches, the one nearest the origin first; the nearest the
///   user (the last member) decides. `hit` is a hit; `fwd=bypass` or `fwd=request` a bypass; any other
///   `fwd=` (`uri-miss`, `vary-miss`, `miss`, `stale`, `partial`) a miss, the origin was asked.
/// - `CF-Cache-Status` (Cloudflare): `HIT`, `STALE`, `UPDATING` are hits; `MISS`, `EXPIRED`,
///   `REVALIDATED` misses; `BYPASS`, `DYNAMIC` bypasses.
/// - `X-Cache` (CloudFront, Fastly, Akamai, Varnish, nginx setups): the last comma-separated
///   member, the edge's own: a word starting `HIT` (`Hit from cloudfront`, `TCP_HIT`) is a hit, `MISS`
///   a miss, `BYPASS`/`PASS` a bypass.
/// - `Age`: a response older than 0 seconds came from a cache (a hit); `Age: 0` says nothing.
///
/// A response with none of them is ``none``.
///
/// ```swift
/// CacheResult(headers: ["Cache-Status": "edge; hit"])   // .hit
/// ```
package enum CacheResult: String, Sendable, Codable, CaseIterable {
    case hit, miss, bypass, none

    /// The response headers it reads, as ``FetchResult`` captures them.
    package static let headerNames = ["Cache-Status", "CF-Cache-Status", "X-Cache", "Age"]

    /// The result the headers in `headers` (name as in ``headerNames`` -> value) say.
    package init(headers: [String: String]) {
        if let value = headers["Cache-Status"], let result = Self.cacheStatus(value) {
            self = result
        } else if let value = headers["CF-Cache-Status"], let result = Self.word(value) {
            self = result
        } else if let value = headers["X-Cache"], let result = Self.word(Self.lastMember(value)) {
            self = result
        } else if let value = headers["Age"], let age = Int(value.trimmingCharacters(in: .whitespaces)), age > 0 {
            self = .hit
        } else {
            self = .none
        }
    }

    /// The RFC 9211 field: the last member's parameters.
    static func cacheStatus(_ value: String) -> CacheResult? {
        let member = lastMember(value)
        let parameters = member.split(separator: ";").dropFirst().map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard !member.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        if parameters.contains("hit") { return .hit }
        for parameter in parameters where parameter.hasPrefix("fwd=") {
            let reason = parameter.dropFirst(4).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            return ["bypass", "request"].contains(reason) ? .bypass : .miss
        }
        // A cache that names itself but neither hit nor forwarded: RFC 9211 leaves it open.
        return nil
    }

    /// The words of CF-Cache-Status and X-Cache.
    static func word(_ value: String) -> CacheResult? {
        let word = value.trimmingCharacters(in: .whitespaces).uppercased()
        if word.isEmpty { return nil }
        let bare = word.hasPrefix("TCP_") ? String(word.dropFirst(4)) : word
        for (prefix, result) in [
            ("HIT", CacheResult.hit), ("STALE", .hit), ("UPDATING", .hit), ("MISS", .miss), ("EXPIRED", .miss),
            ("REVALIDATED", .miss), ("REFRESH", .miss), ("BYPASS", .bypass), ("DYNAMIC", .bypass), ("PASS", .bypass),
        ] where bare.hasPrefix(prefix) {
            return result
        }
        return nil
    }

    /// The last comma-separated member: the cache nearest the user.
    static func lastMember(_ value: String) -> String {
        String(value.split(separator: ",", omittingEmptySubsequences: true).last ?? Substring(value))
    }
}
