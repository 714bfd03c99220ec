import AssetServer
import Foundation
import TestSupport
import Testing

@testable import RichPush

/// The service extension's App Transport Security through the whole pipeline: every hop of a redirect
/// chain is judged by the rules of its own host.
@Suite struct TransportSecurityPipelineTests {
    let rig: LocalRig
    var server: AssetServer { rig.server }

    init() throws { rig = try LocalRig() }

    func cleanUp() { rig.cleanUp() }

    /// The sample app's service extension: http allowed for media.example.com only. Every host name
    /// used below is mapped to the local server (http on 80, https on 443).
    func service() throws -> ServiceExtension {
        var policy = Fixtures.extensionPolicy(mapping: server, budget: .seconds(60))
        policy.app = try AppConfiguration.scan(folder: Fixtures.root + "/Samples/app")
        let https = "\(server.httpsPort ?? 0)"
        let http = URL(string: server.httpBaseURL)?.port.map(String.init) ?? "0"
        policy.fetch.hostMappings = ["cdn.example.com", "media.example.com", "img.example.net"].flatMap { host in
            [
                HostMapping(host: host, port: "443", targetHost: "127.0.0.1", targetPort: https),
                HostMapping(host: host, port: "80", targetHost: "127.0.0.1", targetPort: http),
            ]
        }
        return ServiceExtension(engine: rig.engine, store: try AttachmentStore(folder: rig.folder), policy: policy)
    }

    func process(_ url: String) async throws -> Outcome {
        let payload = #"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"\#(url)","type":"jpg"}}}"#
        return try await service().process(Array(payload.utf8)).outcome
    }

    @Test func allowsHTTPToTheExceptionDomainOnly() async throws {
        defer { cleanUp() }
        #expect(try await process("http://media.example.com/hero.jpg").verdict == .attached)
        let blocked = try await process("http://img.example.net/hero.jpg")
        #expect(blocked.reason == .atsBlocked)
        #expect(blocked.message.contains("img.example.net has no ATS exception; media.example.com has one"))
        #expect(blocked.hint?.contains("<key>img.example.net</key>") == true)
    }

    @Test func judgesARedirectByTheHostItLeadsTo() async throws {
        defer { cleanUp() }
        let intoExempt = try await process("https://cdn.example.com/hero.jpg?to=http://media.example.com/hero.jpg")
        #expect(intoExempt.verdict == .attached, "\(intoExempt.summaryLine)")
        #expect(intoExempt.download?.redirects == 1)
        let intoOther = try await process("https://media.example.com/hero.jpg?to=http://img.example.net/hero.jpg")
        #expect(intoOther.reason == .atsBlocked, "\(intoOther.summaryLine)")
        #expect(intoOther.message.contains("redirected to http://img.example.net/hero.jpg"))
        let intoData = try await process("https://cdn.example.com/hero.jpg?to=data:,hello")
        #expect(intoData.reason == .redirectNotAllowed, "\(intoData.summaryLine)")
    }

    @Test func followsChainsHopByHopUpToTheLimit() async throws {
        defer { cleanUp() }
        let chain = try await process("https://cdn.example.com/hero.jpg?redirect=3")
        #expect(chain.verdict == .attached, "\(chain.summaryLine)")
        #expect(chain.download?.redirects == 3)
        #expect(chain.attachment?.bytes == Int64(try Fixtures.bytes(ofAsset: "hero.jpg").count))
        let long = try await process("https://cdn.example.com/hero.jpg?redirect=21")
        #expect(long.reason == .tooManyRedirects, "\(long.summaryLine)")
        let permanent = try await process("https://cdn.example.com/hero.jpg?redirect=2&code=308")
        #expect(permanent.verdict == .attached, "\(permanent.summaryLine)")
        #expect(permanent.download?.redirects == 2)
        let choices = try await process("https://cdn.example.com/hero.jpg?redirect=1&code=300")
        #expect(choices.reason == .httpStatus, "300 is not followed: \(choices.summaryLine)")
    }

    @Test func routesTheExpandedViewBesideTheVerdict() async throws {
        defer { cleanUp() }
        let payload =
            #"{"aps":{"alert":"x","mutable-content":1,"category":"personalized"},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg","type":"jpg"}}}"#
        var policy = try service().policy
        policy.requiredKeys = [RequiredKey(key: "cert_title")]
        let configured = ServiceExtension(engine: rig.engine, store: nil, policy: policy)
        let result = await configured.process(Array(payload.utf8))
        #expect(result.outcome.verdict == .attached)
        #expect(result.outcome.contentExtension?.outcome == .wouldCrash)
        let mutated = try JSONValue.parse(result.mutatedPayload ?? [])
        #expect(mutated["richpush"]?["content_extension"]?["key"] == .string("cert_title"))
    }
}

/// `NSExceptionMinimumTLSVersion` is enforced on the connection, against a server that speaks TLS 1.1 only.
@Suite struct MinimumTLSVersionTests {
    @Test func anExceptionDomainGetsExactlyTheTLSVersionsItsEntryAllows() async throws {
        var identity = try Fixtures.tlsIdentity()
        identity.priorities = "NORMAL:-VERS-ALL:+VERS-TLS1.1"
        let server = try AssetServer(root: Fixtures.assets, tls: identity)
        defer { server.stop() }
        let engine = try FetchEngine(loops: 1)
        defer { engine.shutdown() }
        func fetch(minimum: String?) async -> Result<FetchResult, FetchError> {
            var policy = Fixtures.fetchPolicy(mapping: server)
            var entry: [String: Any] = [:]
            if let minimum { entry["NSExceptionMinimumTLSVersion"] = minimum }
            policy.transportSecurity = AppTransportSecurity(["NSExceptionDomains": ["cdn.example.com": entry]])
            let request = FetchRequest(url: "https://cdn.example.com/hero.jpg", budget: .seconds(60), policy: policy)
            do throws(FetchError) { return .success(try await engine.fetch(request, writingTo: -1)) } catch {
                return .failure(error)
            }
        }
        // The default (TLS 1.2) and an explicit TLSv1.2 refuse the TLS 1.1 server ...
        for minimum in [nil, "TLSv1.2"] {
            guard case .failure(let error) = await fetch(minimum: minimum) else {
                Issue.record("TLS 1.1 was accepted under a \(minimum ?? "default") minimum")
                continue
            }
            #expect(error.code == .tlsFailed, "\(error)")
        }
        // ... and TLSv1.0 or TLSv1.1 let it through.
        for minimum in ["TLSv1.0", "TLSv1.1"] {
            let result = await fetch(minimum: minimum)
            #expect((try? result.get())?.httpStatus == 200, "\(minimum): \(result)")
        }
    }
}
