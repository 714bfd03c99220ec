import Foundation
import RichPush
import RichPushServices
import TestSupport
import Testing

/// `richpush serve`'s configuration: the folder, the certificate pairing and its defaults, the
/// /users/track options, and the notes printed once the server listens.
@Suite struct ServeConfigurationTests {
    /// Messages spell settings as the command line does, as users read them.
    init() { useCommandLineSpelling() }

    let samples = Fixtures.root + "/Samples"

    func configuration(
        _ arguments: [String] = [], samples: String?, tls: Bool = true, certificate: String? = nil,
        key: String? = nil
    ) throws -> ServeConfiguration {
        try ServeConfiguration(folder: arguments.first, samples: samples, tls: tls, certificate: certificate, key: key)
    }

    @Test func theFolderDefaultsToTheSamplesAndMustExist() throws {
        #expect(try configuration(samples: samples).root == samples + "/assets")
        #expect(try configuration([Fixtures.assets], samples: nil, tls: false).root == Fixtures.assets)
        #expect(
            isUsage(
                setupError { _ = try configuration(samples: nil) },
                "no folder given and no Samples/assets here: give the folder of assets to serve"))
        let missing = setupError { _ = try configuration(["/nonexistent/assets"], samples: samples) }
        #expect(
            isUnusable(missing, "'/nonexistent/assets' does not exist: give the folder of assets to serve"))
        let file = setupError { _ = try configuration([Fixtures.caFile], samples: samples) }
        #expect(
            file?.code == .unusableInput
                && file?.message.hasSuffix("is not a folder: give the folder of assets to serve") == true)
        // The folder is checked before the certificate pairing.
        #expect(
            setupError { _ = try configuration(["/nonexistent"], samples: nil, certificate: "c.pem") }?.code
                == .unusableInput)
    }

    @Test func aCertificateNeedsItsKeyAndTheSamplesGiveTheTestPair() throws {
        let defaults = try configuration(samples: samples)
        #expect(defaults.tlsFiles?.certificate == samples + "/certs/server.pem")
        #expect(defaults.tlsFiles?.key == samples + "/certs/server-key.pem")
        #expect(try configuration(samples: samples, tls: false).tlsFiles == nil)
        let given = try configuration(samples: samples, certificate: "c.pem", key: "k.pem")
        #expect(given.tlsFiles?.certificate == "c.pem" && given.tlsFiles?.key == "k.pem")
        #expect(
            isUsage(
                setupError { _ = try configuration(samples: samples, certificate: "c.pem") },
                "--cert needs --key (the private key of that certificate), or pass --no-tls"))
        #expect(
            isUsage(
                setupError { _ = try configuration(samples: samples, key: "k.pem") },
                "--key needs --cert (the certificate chain for that key), or pass --no-tls"))
        #expect(
            isUsage(
                setupError { _ = try configuration([Fixtures.assets], samples: nil) },
                "HTTPS needs --cert FILE and --key FILE (no Samples/certs here), or pass --no-tls"))
        // Without TLS, a lone --cert is not a mistake: it is not used.
        #expect(try configuration(samples: samples, tls: false, certificate: "c.pem").tlsFiles == nil)
    }

    @Test func theNotesSayHowToTrustTheTestCertificate() throws {
        useCommandLineSpelling()
        var test = try configuration(samples: samples)
        #expect(test.startNotes.first == "serving \(samples)/assets")
        #expect(
            test.startNotes.contains("HTTPS uses the test certificate; trust it with --cacert \(samples)/certs/ca.pem"))
        #expect(!test.startNotes.contains { $0.contains("/users/track") })
        test.usersTrack = .init(apiKey: "k")
        #expect(test.startNotes.contains("POST /users/track answers like Braze's REST API"))
        let own = try configuration(samples: samples, certificate: "c.pem", key: "k.pem")
        #expect(!own.startNotes.contains { $0.contains("test certificate") })
        #expect(own.startNotes == ["serving \(samples)/assets"])
    }

    @Test func usersTrackNeedsAKeyFileAndReadsTheLimit() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let keyFile = folder + "/key"
        try "  secret-key\n".write(toFile: keyFile, atomically: false, encoding: .utf8)
        let empty = folder + "/empty"
        try "\n".write(toFile: empty, atomically: false, encoding: .utf8)
        typealias Track = ServeConfiguration.UsersTrack
        #expect(try Track.parse(keyFile: nil, logPath: nil, limit: nil) == nil)
        #expect(
            isUsage(
                setupError { _ = try Track.parse(keyFile: nil, logPath: "log", limit: nil) },
                "--track-log and --track-limit need --api-key-file"))
        let track = try Track.parse(keyFile: keyFile, logPath: "log", limit: "3000/3")
        #expect(track?.apiKey == "secret-key" && track?.logPath == "log")
        #expect(track?.limit == 3000 && track?.windowSeconds == 3)
        let plain = try Track.parse(keyFile: keyFile, logPath: nil, limit: "5")
        #expect(plain?.limit == 5 && plain?.windowSeconds == 1)
        #expect(try Track.parse(keyFile: keyFile, logPath: nil, limit: nil)?.limit == 20)
        for limit in ["0", "x", "5/0", "5/3601", "1/2/3", "/3"] {
            #expect(
                isUsage(
                    setupError { _ = try Track.parse(keyFile: keyFile, logPath: nil, limit: limit) },
                    "--track-limit takes N or N/SECONDS (for example 3000/3), not '\(limit)'"))
        }
        for file in [empty, folder + "/none"] {
            #expect(
                isUnusable(
                    setupError { _ = try Track.parse(keyFile: file, logPath: nil, limit: nil) },
                    "--api-key-file \(file): no readable file with a key there"))
        }
    }
}
