import Foundation
import RichPush

/// Everything `richpush analytics flush` is told: the suite, the endpoint and the user, how the key
/// is found, the trust and host mappings, and how requests are paced and retried.
///
/// The command line checks the endpoint and the user as it reads them (``requireEndpoint(_:)``,
/// ``user(externalID:brazeID:)``); ``endpoint(environment:)`` checks the rest before anything is sent,
/// and ``FlushSession`` runs the flush.
///
/// ```swift
/// var configuration = FlushConfiguration(suite: suite, endpointURL: "https://rest.example.com", user: .externalID("u1"))
/// configuration.keyFile = "key.txt"
/// let endpoint = try configuration.endpoint()
/// ```
package struct FlushConfiguration: Sendable {
    /// The App Group suite whose pending items are sent.
    package var suite: AppGroupSuite
    /// The REST endpoint's URL; `/users/track` is appended.
    package var endpointURL: String
    /// The file holding the REST API key; without it the key comes from `BRAZE_REST_API_KEY`.
    package var keyFile: String?
    /// A CA file to trust besides the system's.
    package var caFile: String?
    /// Host mappings, `HOST:PORT:HOST2:PORT2` as curl takes them.
    package var connectTo: [String] = []
    /// Time allowed for one request.
    package var requestTimeout: Duration = Self.defaultRequestTimeout
    /// The time one request has when none is given.
    package static let defaultRequestTimeout: Duration = .seconds(30)
    /// The user, the pacing and the retries.
    package var options: FlushOptions

    package init(suite: AppGroupSuite, endpointURL: String, user: UserIdentifier) {
        self.suite = suite
        self.endpointURL = endpointURL
        options = FlushOptions(user: user)
    }

    /// The endpoint given, or `invalid-combination` saying it is required.
    package static func requireEndpoint(_ url: String?) throws(ConfigurationError) -> String {
        guard let url else {
            throw ConfigurationError(
                .invalidCombination, "\(Setting.endpoint) URL is required (the REST endpoint; /users/track is appended)"
            )
        }
        return url
    }

    /// The user from exactly one of an external ID and a Braze ID; none or both is `invalid-combination`.
    package static func user(externalID: String?, brazeID: String?) throws(ConfigurationError) -> UserIdentifier {
        switch (externalID, brazeID) {
        case (let id?, nil): .externalID(id)
        case (nil, let id?): .brazeID(id)
        default:
            throw ConfigurationError(
                .invalidCombination, "give exactly one of \(Setting.externalID) ID and \(Setting.brazeID) ID")
        }
    }

    /// The endpoint with its key, trust, host mappings and timeout, checked in that order: an unreadable
    /// CA file is `unusable-input`, like every command's; a malformed host mapping, a missing key and an
    /// unusable URL are `invalid-value`.
    package func endpoint(environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ConfigurationError)
        -> TrackEndpoint
    {
        if let caFile { try CertificateAuthorityFile.checkOption(caFile) }
        let mappings = try HostMapping.parsing(option: connectTo)
        let key = try APIKey.resolve(file: keyFile, environment: environment)
        var endpoint: TrackEndpoint
        do throws(AnalyticsError) {
            endpoint = try TrackEndpoint(base: endpointURL, apiKey: key)
        } catch {
            throw ConfigurationError.invalid(.endpoint, error.message)
        }
        endpoint.caFile = caFile
        endpoint.connectTo = mappings
        endpoint.requestTimeout = requestTimeout
        return endpoint
    }
}
