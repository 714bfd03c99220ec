/// How one response should misbehave, read from the request's query string.
///
/// Every fault is a query parameter, so a payload URL alone can ask for one
/// (`https://cdn.example.com/hero.jpg?delay=40000`). Parameters combine. Numbers are decimal; a
/// malformed value is a 400 response naming it. A parameter the server does not know is ignored, as a
/// CDN ignores cache busters, `utm_*` tags and signature parameters, and noted in ``ignoredParameters``
/// (the access log shows them); with `strict` (`serve --strict-faults`) it is a 400 that lists the
/// known ones, so a typo (`stal=0`) never passes silently. Tags that only make a URL distinct
/// (``ignoredTags``, or any name starting with `_`) are accepted without a note either way.
///
/// | parameter | effect |
/// |---|---|
/// | `delay=MS` | wait before sending the status line |
/// | `status=CODE` | answer with that HTTP status and a small HTML error page |
/// | `status-body=asset` | with `status=CODE`, send the asset itself as that response's body (a CDN's placeholder image on a 404) instead of the page |
/// | `redirect=N` | a chain of N `302` redirects back to the same asset, then the asset |
/// | `to=URL` | one `302` redirect to URL (any scheme, for example `file:///etc/passwd`) |
/// | `code=3XX` | the status of those redirects instead of `302`: 301, 303, 307, 308 (followed by URLSession), or 300, 304, 305 (not followed) |
/// | `type=MIME` | send this Content-Type instead of the one the file extension implies |
/// | `disposition=TEXT` | send `Content-Disposition: TEXT` (for example `attachment; filename="photo.jpg"`), which `URLResponse.suggestedFilename` prefers |
/// | `gzip=1` | gzip the body and say `Content-Encoding: gzip` |
/// | `size=BYTES` | make the body exactly BYTES long: the file, then zero bytes (or the file cut short) |
/// | `chunked=1` | send no Content-Length: chunked transfer encoding |
/// | `endless=1` | a chunked body that never ends (the server gives up after 4 GiB) |
/// | `truncate=BYTES` | declare the full length, send BYTES, close the connection |
/// | `length=BYTES` | declare `Content-Length: BYTES` whatever the real length (shorter cuts the body) |
/// | `stall=BYTES` | after BYTES of body, send nothing for `stall-ms` (default 600000) |
/// | `rate=BPS` | trickle the body at BPS bytes per second |
/// | `reset=BYTES` | send BYTES of body, then reset the TCP connection (`reset=0`: before any response) |
/// | `every=K` | apply the other faults to every K-th request only (the server counts requests); the rest are served normally |
package struct FaultPlan: Sendable {
    package var delayMilliseconds: Int = 0
    package var status: Int?
    /// With ``status``, send the asset as the error response's body instead of an HTML page.
    package var statusBodyIsAsset = false
    package var redirects: Int = 0
    package var redirectTarget: String?
    /// The status line of the redirects `redirect=N` and `to=URL` send (`code=`, 300 to 399).
    package var redirectCode = 302
    package var contentType: String?
    /// The Content-Disposition header to send, as given.
    package var contentDisposition: String?
    package var gzip = false
    package var size: UInt64?
    package var chunked = false
    package var endless = false
    package var truncateAt: UInt64?
    package var declaredLength: UInt64?
    package var stallAt: UInt64?
    package var stallMilliseconds: Int = 600_000
    package var bytesPerSecond: Int?
    package var resetAt: UInt64?
    /// Apply the faults to every `every`-th request only.
    package var every: Int?

    /// The query without the `redirect` parameter, to carry other faults along a redirect chain.
    package var passthroughQuery: [(String, String)] = []

    package init() {}

    /// Every fault parameter the server understands, in the order the documentation lists them.
    package static let knownParameters = [
        "delay", "status", "status-body", "redirect", "to", "code", "type", "disposition", "gzip", "size", "chunked",
        "endless",
        "truncate", "length",
        "stall", "stall-ms", "rate", "reset", "every",
    ]

    /// Parameters that carry no fault and only make a URL distinct (cache busting, one URL per device).
    /// `filename` is OneSignal's naming hint (`?filename=photo.png`), which only the SDK reads.
    package static let ignoredTags: Set<String> = ["n", "v", "id", "tag", "shared", "filename"]

    /// Parameters no fault reads, in the order given (empty when `strict`, which refuses them).
    package var ignoredParameters: [String] = []

    /// Reads the plan from query arguments; throws the first parameter that is malformed, or with
    /// `strict` unknown.
    package init(query: [(String, String)], strict: Bool = false) throws(FaultPlanError) {
        for (key, value) in query {
            func number<T: FixedWidthInteger>(_: T.Type) throws(FaultPlanError) -> T {
                guard let parsed = T(value), parsed >= 0 else { throw FaultPlanError(parameter: key, value: value) }
                return parsed
            }
            func flag() throws(FaultPlanError) -> Bool {
                switch value {
                case "", "1", "true", "yes": return true
                case "0", "false", "no": return false
                default: throw FaultPlanError(parameter: key, value: value)
                }
            }
            switch key {
            case "delay": delayMilliseconds = try number(Int.self)
            case "status":
                let code = try number(Int.self)
                guard (100...599).contains(code) else { throw FaultPlanError(parameter: key, value: value) }
                status = code
            case "status-body":
                switch value {
                case "asset": statusBodyIsAsset = true
                case "page": statusBodyIsAsset = false
                default: throw FaultPlanError(parameter: key, value: value)
                }
            case "redirect": redirects = try number(Int.self)
            case "to": redirectTarget = value
            case "code":
                let code = try number(Int.self)
                guard (300...399).contains(code) else { throw FaultPlanError(parameter: key, value: value) }
                redirectCode = code
            case "type": contentType = value
            case "disposition": contentDisposition = value
            case "gzip": gzip = try flag()
            case "size": size = try number(UInt64.self)
            case "chunked": chunked = try flag()
            case "endless": endless = try flag()
            case "truncate": truncateAt = try number(UInt64.self)
            case "length": declaredLength = try number(UInt64.self)
            case "stall": stallAt = try number(UInt64.self)
            case "stall-ms": stallMilliseconds = try number(Int.self)
            case "rate":
                let rate = try number(Int.self)
                guard rate > 0 else { throw FaultPlanError(parameter: key, value: value) }
                bytesPerSecond = rate
            case "reset": resetAt = try number(UInt64.self)
            case "every":
                let period = try number(Int.self)
                guard period > 0 else { throw FaultPlanError(parameter: key, value: value) }
                every = period
            default:
                guard Self.ignoredTags.contains(key) || key.hasPrefix("_") else {
                    if strict { throw FaultPlanError(parameter: key, value: value, isUnknown: true) }
                    ignoredParameters.append(key)
                    passthroughQuery.append((key, value))
                    continue
                }
            }
            if key != "redirect" { passthroughQuery.append((key, value)) }
        }
    }

    /// The plan for request number `sequence` (1-based): with `every=K`, only every K-th request
    /// keeps its faults; the others get a plan with none.
    package func applying(toRequest sequence: Int) -> FaultPlan {
        guard let every, sequence % every != 0 else { return self }
        var plain = FaultPlan()
        plain.passthroughQuery = passthroughQuery
        plain.ignoredParameters = ignoredParameters
        return plain
    }
}

/// A query parameter whose value the server cannot use.
package struct FaultPlanError: Error, Sendable, CustomStringConvertible {
    package var parameter: String
    package var value: String
    /// True when no fault has this name (rather than an unusable value).
    package var isUnknown: Bool

    package init(parameter: String, value: String, isUnknown: Bool = false) {
        self.parameter = parameter
        self.value = value
        self.isUnknown = isUnknown
    }

    package var description: String {
        guard isUnknown else { return "fault parameter '\(parameter)' has an unusable value '\(value)'" }
        return "unknown fault parameter '\(parameter)': the known ones are "
            + FaultPlan.knownParameters.joined(separator: ", ")
            + " (tags such as n=, v= or any name starting with '_' are ignored)"
    }
}
