import Foundation
import RichPush
import TestSupport
import Testing

/// The CA file check that runs before any download: a file without a certificate is refused with a
/// code and a message naming it, like a missing one.
@Suite struct CertificateAuthorityFileTests {
    @Test func countsTheCertificatesOfACAFileAndABundle() throws {
        #expect(try CertificateAuthorityFile.check(Fixtures.caFile) == 1)
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bundle = folder + "/bundle.pem"
        let ca = try String(contentsOfFile: Fixtures.caFile, encoding: .utf8)
        try ("comment line\n" + ca + "\n" + ca).write(toFile: bundle, atomically: true, encoding: .utf8)
        #expect(try CertificateAuthorityFile.check(bundle) == 2)
    }

    func failure(_ path: String) -> CertificateAuthorityFile.Failure? {
        do throws(CertificateAuthorityFile.Failure) {
            _ = try CertificateAuthorityFile.check(path)
            return nil
        } catch {
            return error
        }
    }

    @Test func refusesAFileWithoutCertificatesAMissingOneAndAFolder() throws {
        let readme = try #require(failure(Fixtures.root + "/README.md"))
        #expect(readme.code == .noCertificate)
        #expect(readme.message.contains("README.md") && readme.message.contains("holds no certificate"))
        #expect(!readme.message.contains("--cacert"))
        // A key is PEM too, but not a certificate.
        #expect(failure(Fixtures.certs + "/ca-key.pem")?.code == .noCertificate)
        let missing = try #require(failure("/nonexistent/ca.pem"))
        #expect(missing.code == .missing)
        #expect(missing.message.contains("/nonexistent/ca.pem"))
        #expect(failure(Fixtures.certs)?.code == .unreadable)
        #expect(failure("/dev/zero")?.code == .unreadable)
    }

    @Test func refusesACertificateBlockThatDoesNotDecode() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/damaged.pem"
        try "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        let damaged = try #require(failure(path))
        #expect(damaged.code == .damaged)
        #expect(damaged.cause != nil)
    }
}
