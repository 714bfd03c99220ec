import Synchronization

/// A setting of a run that a message can point to: "lower the concurrency", "trust the server's CA".
///
/// The library names settings, never how a front end spells them: the front end installs its
/// spelling once (``spelling``), and every message the library writes (errors, verdict hints, report
/// notes) reads the way the user set it. A library consumer that installs nothing gets the setting's
/// plain name (`concurrency`).
///
/// ```swift
/// "lower \(Setting.concurrency) to 200"   // "lower concurrency to 200", or in the front end's spelling
/// ```
package enum Setting: String, Sendable, CaseIterable, CustomStringConvertible {
    // The extension and its downloads.
    case budget, pushType = "push-type", binaryMegabytes = "binary-mb", allowHTTP = "allow-http"
    case connectTimeout = "connect-timeout", stallWindow = "stall-window", maxBytes = "max-bytes"
    case maxRedirects = "max-redirs", caFile = "cacert", connectTo = "connect-to", reuse
    case network, networkMix = "network-mix", shareDownloads = "share-downloads"
    case ios, linkedSDK = "linked-sdk", iosMix = "ios-mix", audience
    // The app's own files.
    case app, servicePlist = "service-plist", contentPlist = "content-plist", requireKey = "require-key"
    // Runs and their outputs.
    case concurrency, parallel, shard, seed, out, force, samples, html, json, brazeRequests = "braze-requests"
    // A bench's target and arrival.
    case payload, url, type, ownsHost = "i-own-this-host", arrival, ramp, rate, devices, timeLimit = "time-limit"
    case startAt = "start-at"
    case failUnder = "fail-under", maxP99 = "max-p99", threshold
    // A campaign-shaped bench: many URLs, the per-device log, the emulated edge.
    case urls, log, edge
    // Analytics.
    case endpoint, externalID = "external-id", brazeID = "braze-id", apiKeyFile = "api-key-file"
    case event, attribute, email, property, appGroup = "app-group", suite
    // The asset server.
    case trackLog = "track-log", trackLimit = "track-limit", certificate = "cert", privateKey = "key"
    case noTLS = "no-tls"

    /// How settings are spelled in messages: the front end's choice, installed once at start.
    package static var spelling: @Sendable (Setting) -> String {
        get { installedSpelling.withLock { $0 } }
        set { installedSpelling.withLock { $0 = newValue } }
    }

    private static let installedSpelling = Mutex<@Sendable (Setting) -> String>({ $0.rawValue })

    /// The setting as the installed spelling writes it.
    package var description: String { Self.spelling(self) }
}
