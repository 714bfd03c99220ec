import Foundation
import RichPush
import RichPushServices
import TestSupport
import Testing

/// `analytics flush`'s configuration and session: the checks made before anything is sent, in their
/// order, where the key comes from, and the summary's text and exit codes.
@Suite struct FlushConfigurationTests {
    /// Messages spell settings as the command line does, as users read them.
    init() { useCommandLineSpelling() }

    /// A configuration on a fresh App Group container, and its folder (removed by the caller).
    func configuration(endpoint: String = "https://rest.example.com") throws -> (FlushConfiguration, String) {
        let folder = try Fixtures.temporaryFolder()
        let suite = try AppGroupSuite(container: folder, suite: "group.test", creating: true)
        return (FlushConfiguration(suite: suite, endpointURL: endpoint, user: .brazeID("b-1")), folder)
    }

    @Test func theEndpointAndExactlyOneUserAreRequired() throws {
        #expect(try FlushConfiguration.requireEndpoint("https://x") == "https://x")
        #expect(
            isUsage(
                setupError { _ = try FlushConfiguration.requireEndpoint(nil) },
                "--endpoint URL is required (the REST endpoint; /users/track is appended)"))
        #expect(try FlushConfiguration.user(externalID: "u", brazeID: nil) == .externalID("u"))
        #expect(try FlushConfiguration.user(externalID: nil, brazeID: "b") == .brazeID("b"))
        for (external, braze) in [(nil, nil), ("u", "b")] as [(String?, String?)] {
            #expect(
                isUsage(
                    setupError { _ = try FlushConfiguration.user(externalID: external, brazeID: braze) },
                    "give exactly one of --external-id ID and --braze-id ID"))
        }
    }

    @Test func theKeyComesFromTheFileOrTheEnvironmentAndIsNeverShown() throws {
        let (base, folder) = try configuration()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "file-key\n".write(toFile: folder + "/key", atomically: false, encoding: .utf8)
        var configuration = base
        #expect(
            isUsage(
                setupError { _ = try configuration.endpoint(environment: [:]) },
                "no REST API key: give --api-key-file FILE or set BRAZE_REST_API_KEY"))
        #expect(try APIKey.resolve(file: nil, environment: ["BRAZE_REST_API_KEY": "env-key"]) == "env-key")
        #expect(
            try configuration.endpoint(environment: ["BRAZE_REST_API_KEY": "env-key"]).url.hasSuffix("/users/track"))
        // The file wins over the environment.
        configuration.keyFile = folder + "/key"
        let environment = ["BRAZE_REST_API_KEY": "env-key"]
        // One reader for every command: the file's key without its final newline.
        #expect(try APIKey.resolve(file: configuration.keyFile, environment: environment) == "file-key")
        #expect(try configuration.endpoint(environment: [:]).url == "https://rest.example.com/users/track")
        configuration.keyFile = folder + "/none"
        #expect(
            isUnusable(
                setupError { _ = try configuration.endpoint(environment: [:]) },
                "--api-key-file \(folder)/none: no readable file with a key there"))
        // A key the endpoint refuses is a failure (exit 1), and the message does not contain it.
        let error = setupError { _ = try base.endpoint(environment: ["BRAZE_REST_API_KEY": "secret\nmore"]) }
        #expect(error?.code == .invalidValue)
        #expect(error?.message.contains("secret") == false)
    }

    @Test func checksTrustMappingsKeyAndURLInThatOrder() throws {
        let (base, folder) = try configuration(endpoint: "http://rest.example.com")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var configuration = base
        configuration.caFile = folder + "/missing.pem"
        configuration.connectTo = ["nonsense"]
        let noKey: [String: String] = [:]
        #expect(
            isUnusable(
                setupError { _ = try configuration.endpoint(environment: noKey) },
                "--cacert: the CA file \(folder)/missing.pem: no file there; give the CA certificate (PEM) that signs the server's certificate"
            ))
        configuration.caFile = Fixtures.caFile
        #expect(
            isUsage(
                setupError { _ = try configuration.endpoint(environment: noKey) },
                "--connect-to 'nonsense' is not HOST:PORT:HOST2:PORT2 (for example cdn.example.com:443:127.0.0.1:8443)")
        )
        configuration.connectTo = ["rest.example.com:443:127.0.0.1:8443"]
        #expect(
            setupError { _ = try configuration.endpoint(environment: noKey) }?.message.hasPrefix("no REST API key")
                == true)
        let key = ["BRAZE_REST_API_KEY": "k"]
        #expect(
            isUsage(
                setupError { _ = try configuration.endpoint(environment: key) },
                "--endpoint 'http://rest.example.com': the REST endpoint must be https (plain http only to 127.0.0.1, for richpush serve)"
            ))
        configuration.endpointURL = "https://rest.example.com/"
        configuration.requestTimeout = .milliseconds(2500)
        let endpoint = try configuration.endpoint(environment: key)
        #expect(endpoint.url == "https://rest.example.com/users/track")
        #expect(
            endpoint.caFile == Fixtures.caFile
                && endpoint.connectTo.map(\.description) == ["rest.example.com:443:127.0.0.1:8443"])
        #expect(endpoint.requestTimeout == .milliseconds(2500))
    }

    @Test func theSummarysTextStopMessageAndCompleteness() throws {
        var summary = FlushSummary()
        summary.itemsRead = 4
        summary.resumed = 1
        summary.requestsSent = 2
        summary.accepted = 3
        summary.leftPending = 0
        #expect(
            summary.text
                == "items read 4 (1 resumed from the outbox), requests sent 2, accepted 3, retried 0, rejected 0, left pending 0"
        )
        #expect(summary.stopMessage == nil)
        #expect(summary.isComplete)
        let rejected = try JSONDecoder().decode(
            RejectedItem.self,
            from: Data(#"{"kind":"event","name":"a\nb","fields":[],"source":"endpoint","reason":"bad"}"#.utf8))
        summary.rejected = [rejected]
        summary.stopped = "the endpoint answered 401\nforged"
        summary.errors = ["one", "two"]
        let lines = summary.text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1] == #"rejected: event a\nb (endpoint): bad"#)
        #expect(summary.stopMessage == #"stopped: the endpoint answered 401\nforged"# + "\n  error: one\n  error: two")
        #expect(!summary.isComplete)
    }

    @Test func aSessionChecksTheConfigurationBeforeItStarts() throws {
        var (configuration, folder) = try configuration()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        configuration.connectTo = ["a:b"]
        #expect(
            isUsage(
                setupError { _ = try FlushSession(configuration) },
                "--connect-to 'a:b' is not HOST:PORT:HOST2:PORT2 (for example cdn.example.com:443:127.0.0.1:8443)"))
    }
}
