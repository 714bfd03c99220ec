import Foundation

/// Where an SDK's own network calls go (OneSignal's receipt, CleverTap's Notification Viewed,
/// Customer.io's delivery metric), and how
/// long they take when they go nowhere.
///
/// They go only to an endpoint the user names (`--sdk-endpoint URL`), never to a vendor's host:
/// without one, each call's time is modelled as ``latency`` and its report says `modelled`.
public struct SDKCallPolicy: Sendable, Equatable {
    /// The base URL every SDK call goes to (`--sdk-endpoint`, `richpush serve` answers them); nil: modelled.
    public var endpoint: String?
    /// A call's round trip when there is no endpoint (`--sdk-latency`).
    public var latency: Duration = .milliseconds(200)
    /// The calls an app turns on (`SDKCall/optIn`, `--sdk-receipts`): OneSignal's App Group receipt
    /// flag (`OSUD_RECEIVE_RECEIPTS_ENABLED`) and CleverTap's `recordNotificationViewedEventWithData:`
    /// in the extension. Off, as richpush cannot know an app's setting (an inferred default).
    public var receipts = false
    /// The largest receipt jitter (OneSignal: 24 s); tests shorten it.
    public var maxJitter: Duration = .seconds(24)

    public init() {}

    /// The endpoint's URL with a call's path appended to its path, and the call's query (if any)
    /// before the endpoint's own (a mock server's faults).
    ///
    /// ```swift
    /// SDKCallPolicy.url(endpoint: "http://127.0.0.1:8080/?delay=500", path: "/v1/track")
    /// // "http://127.0.0.1:8080/v1/track?delay=500"
    /// SDKCallPolicy.url(endpoint: "http://127.0.0.1:8080/?delay=500", path: "/a1?os=iOS")
    /// // "http://127.0.0.1:8080/a1?os=iOS&delay=500"
    /// ```
    public static func url(endpoint: String, path: String) -> String {
        let parts = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let callPath = String(parts[0]), callQuery = parts.count > 1 ? String(parts[1]) : nil
        guard var components = URLComponents(string: endpoint) else { return endpoint + path }
        let base = components.percentEncodedPath
        components.percentEncodedPath = (base.hasSuffix("/") ? String(base.dropLast()) : base) + callPath
        let queries = [callQuery, components.percentEncodedQuery].compactMap { $0 }.filter { !$0.isEmpty }
        components.percentEncodedQuery = queries.isEmpty ? nil : queries.joined(separator: "&")
        return components.string ?? endpoint + path
    }
}

/// One SDK call as the outcome reports it (JSON, each element of `sdk_calls`): `{"name": "delivery metric",
/// "method": "POST", "url": "http://127.0.0.1:8080/v1/track", "modelled": false, "status": 200,
/// "latency_ms": 12.5, "blocks_display": true}`.
package struct SDKCallReport: Sendable, Decodable, Equatable {
    package var name: String
    package var method: String
    /// The URL requested; nil when the call was modelled.
    package var url: String?
    /// True when no endpoint was given and the time is ``SDKCallPolicy/latency``.
    package var modelled: Bool
    /// The endpoint's HTTP status, when it answered.
    package var status: Int?
    package var latencyMilliseconds: Double
    /// The random delay before the call (OneSignal's receipt), in milliseconds.
    package var jitterMilliseconds: Double?
    /// Whether display waited for it.
    package var blocksDisplay: Bool
    /// Why the call got no answer.
    package var error: String?

    enum CodingKeys: String, CodingKey {
        case name, method, url, modelled, status
        case latencyMilliseconds = "latency_ms"
        case jitterMilliseconds = "jitter_ms"
        case blocksDisplay = "blocks_display"
        case error
    }

    package var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("name", .string(name)), ("method", .string(method)),
        ]
        if let url { members.append(("url", .string(url))) }
        members.append(("modelled", .bool(modelled)))
        if let status { members.append(("status", .number(String(status)))) }
        members.append(("latency_ms", .number(String(Rounding.milliseconds(latencyMilliseconds)))))
        if let jitterMilliseconds {
            members.append(("jitter_ms", .number(String(Rounding.milliseconds(jitterMilliseconds)))))
        }
        members.append(("blocks_display", .bool(blocksDisplay)))
        if let error { members.append(("error", .string(error))) }
        return .object(members)
    }
}
