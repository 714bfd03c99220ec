import Foundation

/// Everything `richpush fetch` is told: one URL, its budget, the download policy, and the repeat run's sizes.
///
/// ``init(arguments:policy:)`` checks the URL before anything starts (exactly one, with an http or
/// https scheme); ``FetchSession`` runs it.
///
/// ```swift
/// var configuration = try FetchConfiguration(arguments: ["https://cdn.example.com/hero.jpg"], policy: FetchPolicy())
/// configuration.repeatCount = 100
/// ```
public struct FetchConfiguration: Sendable {
    /// The URL to download.
    public var url: String
    /// The download's overall deadline, like the extension's.
    public var budget: Duration = .seconds(30)
    /// `--repeat N`: download N times and summarise (bodies discarded); nil downloads once.
    public var repeatCount: Int?
    /// Downloads in flight at once with ``repeatCount``.
    public var parallel = 16
    /// Fetch loop threads.
    public var loops = ProcessInfo.processInfo.activeProcessorCount
    /// Trust, host mappings, ATS, timeouts and caps.
    public var policy: FetchPolicy

    /// A configuration for the one URL in `arguments` (the command's positional words).
    ///
    /// Anything but exactly one URL, or a URL without an http or https scheme, is a usage error; a URL
    /// without a scheme is shown with `https://` in front.
    public init(arguments: [String], policy: FetchPolicy) throws(SetupError) {
        guard arguments.count == 1, let url = arguments.first else {
            throw .usage("fetch takes exactly one URL")
        }
        try Self.checkScheme(url)
        self.url = url
        self.policy = policy
    }

    /// A URL without a scheme is a usage error that shows the URL with one; another scheme is refused.
    public static func checkScheme(_ url: String) throws(SetupError) {
        let lowered = url.lowercased()
        guard !lowered.hasPrefix("https://"), !lowered.hasPrefix("http://") else { return }
        if let range = url.range(of: "://") {
            throw .usage(
                "'\(url.escapingControlCharacters)': richpush downloads http:// and https:// URLs only, not "
                    + "\(String(url[..<range.lowerBound]).escapingControlCharacters)://")
        }
        let corrected = "https://" + url.drop(while: { $0 == "/" })
        throw .usage(
            "'\(url.escapingControlCharacters)' has no scheme; did you mean \(corrected.escapingControlCharacters) ?")
    }

    /// The request for one download of ``url``.
    public var request: FetchRequest { FetchRequest(url: url, budget: budget, policy: policy) }
}
