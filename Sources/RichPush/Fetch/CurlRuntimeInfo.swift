import CurlKit

/// Facts about the libcurl in use, for version output and reports.
package enum CurlRuntimeInfo {
    /// libcurl's version string, for example `libcurl/7.88.1 OpenSSL/3.0.15 zlib/1.2.13 ...`.
    package static var version: String { CurlRuntime.version }
}
