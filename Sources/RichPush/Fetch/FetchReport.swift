/// The JSON `richpush fetch` prints for one download: the same `download` object as an ``Outcome``'s.
///
/// ```swift
/// var report = FetchReport(url: url)
/// report.record(result)   // or report.record(error)
/// ```
public struct FetchReport: Codable, Sendable {
    public var url: String
    public var ok = false
    public var download: Outcome.Download?
    public var reason: String?
    public var message: String?
    /// For `tls-failed`: which TLS problem it was.
    public var tlsProblem: TLSProblem?
    /// What fits the failure, where richpush knows (the TLS problem's fix).
    public var hint: String?

    enum CodingKeys: String, CodingKey {
        case url, ok, download, reason, message
        case tlsProblem = "tls_problem"
        case hint
    }

    public init(url: String) { self.url = url }

    /// Records a download that succeeded.
    public mutating func record(_ result: FetchResult) {
        ok = true
        download = Outcome.Download(result)
    }

    /// Records a download that failed, with what it got as far as it got.
    public mutating func record(_ failure: FetchError) {
        download = failure.details.map(Outcome.Download.init)
        ok = false
        reason = failure.code.description
        message = failure.message
        tlsProblem = failure.tlsProblem
        hint = failure.hint
    }
}
