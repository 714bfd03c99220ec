import CCurlShim

/// The process-wide libcurl state: `curl_global_init` runs exactly once, before any loop thread starts.
///
/// `curl_global_init` is not thread-safe, so every entry point into CurlKit touches
/// ``CurlRuntime/ensureInitialized()`` first; a Swift `static let` is initialised once, under a lock.
package enum CurlRuntime {
    private static let initResult: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// Initialises libcurl if nothing has yet; returns whether libcurl is usable.
    @discardableResult
    package static func ensureInitialized() -> Bool {
        initResult == CURLE_OK
    }

    /// The libcurl version string, for reports ("libcurl/7.88.1 OpenSSL/3.0.x ...").
    package static var version: String {
        ensureInitialized()
        guard let text = curl_version() else { return "libcurl" }
        return String(cString: text)
    }
}
