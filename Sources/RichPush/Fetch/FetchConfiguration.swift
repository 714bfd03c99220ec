import Foundation

/// Everything `richpush fetch` is told: one URL, its budget, the download policy, and the repeat run's sizes.
///
/// ``init(url:policy:)`` checks the URL before anything starts (an http or https scheme);
/// ``FetchSession`` runs it.
///
/// ```swift
/// var configuration = try FetchConfiguration(url: "https://cdn.example.com/hero.jpg", policy: FetchPolicy())
/// configuration.repeatCount = 100
/// ```
public struct FetchConfiguration: Sendable {
    /// The URL to download.
    public var url: String
    /// The download's overall deadline, like the extension's.
    public var budget: Duration = .seconds(30)
    /// Download this many times and summarise (bodies discarded); nil downloads once.
    public var repeatCount: Int?
    /// Downloads in flight at once with ``repeatCount``.
    public var parallel = Self.defaultParallel
    /// Downloads in flight when none is given.
    package static let defaultParallel = 16
    /// Fetch loop threads.
    public var loops = ProcessInfo.processInfo.activeProcessorCount
    /// Trust, host mappings, ATS, timeouts and caps.
    public var policy: FetchPolicy

    /// A configuration for `url`.
    ///
    /// A URL without an http or https scheme is `invalid-value`; a URL without a scheme is shown
    /// with `https://` in front.
    public init(url: String, policy: FetchPolicy) throws(ConfigurationError) {
        try Self.checkScheme(url)
        self.url = url
        self.policy = policy
    }

    /// A URL without a scheme is `invalid-value` with the URL shown with one; another scheme is refused.
    public static func checkScheme(_ url: String) throws(ConfigurationError) {
        let lowered = url.lowercased()
        guard !lowered.hasPrefix("https://"), !lowered.hasPrefix("http://") else { return }
        if let range = url.range(of: "://") {
            throw ConfigurationError(
                .invalidValue,
                "'\(url.escapingControlCharacters)': richpush downloads http:// and https:// URLs only, not "
                    + "\(String(url[..<range.lowerBound]).escapingControlCharacters)://")
        }
        let corrected = "https://" + url.drop(while: { $0 == "/" })
        throw ConfigurationError(
            .invalidValue,
            "'\(url.escapingControlCharacters)' has no scheme; did you mean \(corrected.escapingControlCharacters) ?")
    }

    /// The request for one download of ``url``.
    package var request: FetchRequest { FetchRequest(url: url, budget: budget, policy: policy) }
}
