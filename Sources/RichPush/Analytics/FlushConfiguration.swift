import Foundation

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
public struct FlushConfiguration: Sendable {
    /// The App Group suite whose pending items are sent.
    public var suite: AppGroupSuite
    /// `--endpoint URL`: the REST endpoint; `/users/track` is appended.
    public var endpointURL: String
    /// `--api-key-file FILE`; without it the key comes from `BRAZE_REST_API_KEY`.
    public var keyFile: String?
    /// `--cacert FILE`: a CA to trust besides the system's.
    public var caFile: String?
    /// `--connect-to H:P:H2:P2`, as curl takes them.
    public var connectTo: [String] = []
    /// Time allowed for one request.
    public var requestTimeout: Duration = .seconds(30)
    /// The user, the pacing and the retries.
    public var options: FlushOptions

    public init(suite: AppGroupSuite, endpointURL: String, user: UserIdentifier) {
        self.suite = suite
        self.endpointURL = endpointURL
        options = FlushOptions(user: user)
    }

    /// The endpoint given, or a usage error saying it is required.
    public static func requireEndpoint(_ url: String?) throws(SetupError) -> String {
        guard let url else { throw .usage("--endpoint URL is required (the REST endpoint; /users/track is appended)") }
        return url
    }

    /// The user from exactly one of `--external-id` and `--braze-id`; none or both is a usage error.
    public static func user(externalID: String?, brazeID: String?) throws(SetupError) -> UserIdentifier {
        switch (externalID, brazeID) {
        case (let id?, nil): .externalID(id)
        case (nil, let id?): .brazeID(id)
        default: throw .usage("give exactly one of --external-id ID and --braze-id ID")
        }
    }

    /// The endpoint with its key, trust, host mappings and timeout, checked in that order: an unreadable
    /// `--cacert`, a malformed `--connect-to`, a missing key and an unusable URL are usage errors; an
    /// endpoint refused for another reason is exit 1.
    public func endpoint(environment: [String: String] = ProcessInfo.processInfo.environment) throws(SetupError)
        -> TrackEndpoint
    {
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw .usage("--cacert \(caFile): no readable file there")
        }
        for entry in connectTo where entry.split(separator: ":", omittingEmptySubsequences: false).count != 4 {
            throw .usage("--connect-to '\(entry)' is not HOST:PORT:HOST2:PORT2")
        }
        let key = try Self.apiKey(file: keyFile, environment: environment)
        var endpoint: TrackEndpoint
        do throws(AnalyticsError) {
            endpoint = try TrackEndpoint(base: endpointURL, apiKey: key)
        } catch {
            if error.code == .invalidInput { throw .usage(error.message) }
            throw SetupError(.failure, error.message)
        }
        endpoint.caFile = caFile
        endpoint.connectTo = connectTo
        endpoint.requestTimeout = requestTimeout
        return endpoint
    }

    /// The REST API key from `file`, or else from `BRAZE_REST_API_KEY` in `environment`; no key is a
    /// usage error, and no message ever contains the key.
    public static func apiKey(
        file: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(SetupError) -> String {
        if let file {
            guard let data = FileManager.default.contents(atPath: file), let text = String(data: data, encoding: .utf8)
            else {
                throw .usage("--api-key-file \(file): no readable UTF-8 file there")
            }
            return text
        }
        if let text = environment["BRAZE_REST_API_KEY"], !text.isEmpty { return text }
        throw .usage("no REST API key: give --api-key-file FILE or set BRAZE_REST_API_KEY")
    }
}
