import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// Each TLS problem through the real engine, against certificates made for the test: the reason stays
/// `tls-failed`, the detail says which problem it was, and the hint fits it.
@Suite struct TLSDiagnosticsTests {
    let folder: String
    let certificates: TestCertificates

    init() throws {
        folder = try Fixtures.temporaryFolder("richpush-tls")
        certificates = try TestCertificates(in: folder)
    }

    /// Serves the sample assets over HTTPS with `certificate` (a chain file) and `key`, fetches
    /// `url` once trusting `caFile` besides the system's, and returns the error.
    func failure(
        serving certificate: String, key: String, caFile: String?, url: String = "https://cdn.example.com/hero.jpg",
        priorities: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> FetchError? {
        var identity = try TLSIdentity.load(certificate: certificate, key: key)
        identity.priorities = priorities
        let server = try AssetServer(root: Fixtures.assets, tls: identity)
        defer { server.stop() }
        let engine = try FetchEngine(loops: 1)
        defer { engine.shutdown() }
        var policy = Fixtures.fetchPolicy(mapping: server)
        policy.caFile = caFile
        policy.hostMappings.append(
            HostMapping(
                host: "cdn.example.net", port: "443", targetHost: "127.0.0.1", targetPort: "\(server.httpsPort ?? 0)"))
        let request = FetchRequest(url: url, budget: TimeScale.scaled(.seconds(60)), policy: policy)
        do throws(FetchError) {
            let result = try await engine.fetch(request, writingTo: -1)
            Issue.record("expected a TLS failure, got HTTP \(result.httpStatus)", sourceLocation: sourceLocation)
            return nil
        } catch {
            #expect(error.code == .tlsFailed, "\(error)", sourceLocation: sourceLocation)
            return error
        }
    }

    func cleanUp() { try? FileManager.default.removeItem(atPath: folder) }

    var sample: (certificate: String, key: String) {
        (Fixtures.certs + "/server.pem", Fixtures.certs + "/server-key.pem")
    }

    @Test func aHostTheCertificateDoesNotNameIsAHostNameMismatchWithTheNamesItHolds() async throws {
        defer { cleanUp() }
        let error = try #require(
            try await failure(
                serving: sample.certificate, key: sample.key, caFile: Fixtures.caFile,
                url: "https://cdn.example.net/hero.jpg"))
        #expect(error.tlsProblem == .hostnameMismatch)
        #expect(error.message.contains("cdn.example.net"))
        #expect(error.message.contains("*.example.com") && error.message.contains("localhost"), "\(error.message)")
        let hint = try #require(error.hint)
        #expect(!hint.contains("CA file") && !hint.contains("--cacert"), "\(hint)")
    }

    @Test func aCertificateFromAnUntrustedCAIsAnUnknownIssuerWithTheCAFileHint() async throws {
        defer { cleanUp() }
        let error = try #require(try await failure(serving: sample.certificate, key: sample.key, caFile: nil))
        #expect(error.tlsProblem == .unknownIssuer)
        #expect(error.message.contains("richpush test CA"), "\(error.message)")
        #expect(error.hint?.contains("CA file") == true)
        #expect(!error.message.contains("--cacert") && error.hint?.contains("--cacert") == false)
        // A CA file that is not the issuer's is named in the message.
        let other = try certificates.selfSigned("other-root", ca: true)
        let wrong = try #require(
            try await failure(serving: sample.certificate, key: sample.key, caFile: other.certificate))
        #expect(wrong.tlsProblem == .unknownIssuer)
        #expect(wrong.message.contains(other.certificate), "\(wrong.message)")
    }

    @Test func anExpiredCertificateSaysWhenItExpired() async throws {
        defer { cleanUp() }
        let leaf = try certificates.leaf("expired", signedBy: .testCA, from: "20200101000000Z", to: "20210101000000Z")
        let error = try #require(try await failure(serving: leaf.certificate, key: leaf.key, caFile: Fixtures.caFile))
        #expect(error.tlsProblem == .expired)
        #expect(error.message.contains("2021"), "\(error.message)")
        #expect(error.hint?.contains("renew") == true)
    }

    @Test func aCertificateNotValidYetSaysFromWhen() async throws {
        defer { cleanUp() }
        let leaf = try certificates.leaf("future", signedBy: .testCA, from: "20990101000000Z", to: "21000101000000Z")
        let error = try #require(try await failure(serving: leaf.certificate, key: leaf.key, caFile: Fixtures.caFile))
        #expect(error.tlsProblem == .notYetValid)
        #expect(error.message.contains("2099"), "\(error.message)")
        #expect(error.hint?.contains("clock") == true)
    }

    @Test func aSelfSignedServerCertificateAndASelfSignedRootInTheChainAreSelfSigned() async throws {
        defer { cleanUp() }
        let alone = try certificates.selfSigned("alone", ca: false)
        let leafError = try #require(
            try await failure(serving: alone.certificate, key: alone.key, caFile: Fixtures.caFile))
        #expect(leafError.tlsProblem == .selfSigned)
        #expect(leafError.message.contains("self-signed"))
        // A chain that carries its own untrusted root.
        let root = try certificates.selfSigned("root", ca: true)
        let leaf = try certificates.leaf("under-root", signedBy: .issued(root))
        let chain = try certificates.chain("with-root", [leaf, root])
        let chainError = try #require(try await failure(serving: chain, key: leaf.key, caFile: Fixtures.caFile))
        #expect(chainError.tlsProblem == .selfSigned)
        #expect(chainError.message.contains("richpush root"), "\(chainError.message)")
    }

    @Test func aServerThatLeavesOutTheIntermediateHasAnIncompleteChain() async throws {
        defer { cleanUp() }
        let root = try certificates.selfSigned("root", ca: true)
        let intermediate = try certificates.leaf("intermediate", signedBy: .issued(root), intermediate: true)
        let leaf = try certificates.leaf("leaf", signedBy: .issued(intermediate), issuerURL: true)
        let error = try #require(try await failure(serving: leaf.certificate, key: leaf.key, caFile: root.certificate))
        #expect(error.tlsProblem == .incompleteChain)
        #expect(error.message.contains("richpush intermediate"), "\(error.message)")
        #expect(error.hint?.contains("http://pki.example.com/intermediate.crt") == true, "\(error.hint ?? "")")
        // The full chain from the same server is trusted.
        let full = try certificates.chain("full", [leaf, intermediate])
        let server = try AssetServer(root: Fixtures.assets, tls: try TLSIdentity.load(certificate: full, key: leaf.key))
        defer { server.stop() }
        let engine = try FetchEngine(loops: 1)
        defer { engine.shutdown() }
        var policy = Fixtures.fetchPolicy(mapping: server)
        policy.caFile = root.certificate
        let request = FetchRequest(url: "https://cdn.example.com/hero.jpg", budget: .seconds(60), policy: policy)
        #expect(try await engine.fetch(request, writingTo: -1).httpStatus == 200)
    }

    @Test func aServerOnlyOnTLS11IsAProtocolRefusal() async throws {
        defer { cleanUp() }
        let error = try #require(
            try await failure(
                serving: sample.certificate, key: sample.key, caFile: Fixtures.caFile,
                priorities: "NORMAL:-VERS-ALL:+VERS-TLS1.1"))
        #expect(error.tlsProblem == .protocolRefused)
        #expect(error.message.contains("TLS version"), "\(error.message)")
        #expect(error.hint?.contains("NSExceptionMinimumTLSVersion") == true)
    }

    @Test func aCAFileWithoutCertificatesIsUnusable() async throws {
        defer { cleanUp() }
        let error = try #require(
            try await failure(serving: sample.certificate, key: sample.key, caFile: Fixtures.root + "/README.md"))
        #expect(error.tlsProblem == .caFileUnusable)
        #expect(error.message.contains("README.md"))
    }
}
