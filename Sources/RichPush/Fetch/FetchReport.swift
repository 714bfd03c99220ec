/// The JSON `richpush fetch` prints for one download: the same `download` object as an ``Outcome``'s.
///
/// ```swift
/// var report = FetchReport(url: url)
/// report.record(result)   // or report.record(error)
/// ```
package struct FetchReport: Decodable, Sendable {
    package var url: String
    package var ok = false
    package var download: Outcome.Download?
    package var reason: String?
    package var message: String?
    /// For `tls-failed`: which TLS problem it was.
    package var tlsProblem: TLSProblem?
    /// What fits the failure, where richpush knows (the TLS problem's fix).
    package var hint: String?

    enum CodingKeys: String, CodingKey {
        case url, ok, download, reason, message
        case tlsProblem = "tls_problem"
        case hint
    }

    package init(url: String) { self.url = url }

    /// The report as `richpush fetch` prints it: its one serializer, the outcome's `download` object
    /// included as the outcome writes it (`Samples/schemas/fetch-report.schema.json`).
    package var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("url", .string(url)), ("ok", .bool(ok))]
        if let download { members.append(("download", download.json)) }
        if let reason { members.append(("reason", .string(reason))) }
        if let message { members.append(("message", .string(message))) }
        if let tlsProblem { members.append(("tls_problem", .string(tlsProblem.description))) }
        if let hint { members.append(("hint", .string(hint))) }
        return .object(members)
    }

    /// Records a download that succeeded.
    package mutating func record(_ result: FetchResult) {
        ok = true
        download = Outcome.Download(result)
    }

    /// Records a download that failed, with what it got as far as it got.
    package mutating func record(_ failure: FetchError) {
        download = failure.details.map(Outcome.Download.init)
        ok = false
        reason = failure.code.description
        message = failure.message
        tlsProblem = failure.tlsProblem
        hint = failure.hint
    }
}
