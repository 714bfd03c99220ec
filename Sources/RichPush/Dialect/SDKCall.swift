import Foundation

/// A network call an SDK's extension makes besides the download, described as data: when it
/// starts, whether display waits for it, what the app must turn on for it, and the request it
/// sends, built from the payload by ``request``. The pipeline interprets it the same way for every
/// SDK (``ServiceExtension/processWithCalls(_:dialect:arrivedAt:)``): adding a call is adding one.
package struct SDKCall: Sendable {
    package var name: String
    package var method: String
    /// The path on the SDK's host as `sdk list` shows it, with `{id}` for the notification id.
    package var path: String
    /// When the call starts.
    package var start: Start
    /// Whether display waits for it (Customer.io's delivery metric).
    package var blocksDisplay: Bool = false
    /// The random delay before it, in seconds (OneSignal's receipt: 0 to 24), drawn once per
    /// notification id (``SDKRequest/jitterKey``) so runs compare.
    package var jitterSeconds: Double = 0
    /// The SDK's own timeout for the request, from its start; nil: the extension's budget (a call
    /// display waits for, or one beside the download: the budget from its start) or 30 s after
    /// display (the extension's process lives that long).
    package var timeout: Duration? = nil
    /// Whether the app must turn the call on (OneSignal's App Group flag, CleverTap's call in the
    /// extension): sent only with `--sdk-receipts`, as richpush cannot know the app's setting.
    package var optIn: Bool = false
    /// What must be true for the call to happen, in words (`sdk list`).
    package var condition: String
    /// The request for one payload, or nil when this payload does not make the call. A call
    /// without a builder is listed and never sent (its wire format is not emulated).
    package var request: (@Sendable (SDKCallContext) -> SDKRequest?)? = nil

    /// When a call starts, relative to the notification's arrival or its display.
    package enum Start: Sendable, Equatable {
        /// With the download, after `delay` (CleverTap flushes its queue 1 s after the event).
        case withDownload(delay: Duration)
        /// After the content handler is called (OneSignal's receipt).
        case afterDisplay
    }
}

extension SDKCall: Equatable {
    /// Two calls are equal when their descriptions are; the request builders are not compared.
    package static func == (lhs: SDKCall, rhs: SDKCall) -> Bool {
        lhs.name == rhs.name && lhs.method == rhs.method && lhs.path == rhs.path && lhs.start == rhs.start
            && lhs.blocksDisplay == rhs.blocksDisplay && lhs.jitterSeconds == rhs.jitterSeconds
            && lhs.timeout == rhs.timeout && lhs.optIn == rhs.optIn && lhs.condition == rhs.condition
            && (lhs.request == nil) == (rhs.request == nil)
    }
}

/// What a call's request is built from: the payload, and the moment (the SDKs put timestamps in it).
package struct SDKCallContext: Sendable {
    /// The payload's JSON.
    package var root: JSONValue
    /// Seconds since 1970, as the SDK reads `[NSDate date]`.
    package var epochSeconds: Int

    package init(root: JSONValue, epochSeconds: Int) {
        self.root = root
        self.epochSeconds = epochSeconds
    }
}

/// One call's request: the path and query appended to `--sdk-endpoint`, its headers and body.
package struct SDKRequest: Sendable, Equatable {
    /// The path, with its query if the SDK sends one (`/a1?os=iOS&z=…`).
    package var path: String
    package var headers: [String]
    package var body: [UInt8]
    /// What the jitter is drawn from (the notification id); nil: no jitter.
    package var jitterKey: String? = nil

    package init(path: String, headers: [String], body: [UInt8], jitterKey: String? = nil) {
        self.path = path
        self.headers = headers
        self.body = body
        self.jitterKey = jitterKey
    }
}
