import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// `--app` and the plist options through the built binary: demo, process and batch.
@Suite struct AppOptionTests {
    static let app = Fixtures.root + "/Samples/app"

    @Test func demoShowsTheExpandedViewOfEverySampleAsExpected() async throws {
        let run = try await RichPushBinary.run(["demo", "--app", "Samples/app"], directory: Fixtures.root)
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("EXPANDED VIEW"))
        #expect(run.stdout.contains("would-crash:missing-key"))
        #expect(run.stdout.contains("Every payload got the verdict Samples/expected.tsv expects."))
    }

    @Test(arguments: [
        (["--app", "/nonexistent-folder"], "is not a folder", Int32(65)),
        (["--service-plist", app + "/NotificationContent/Info.plist"], "--service-plist", 64),
        (["--content-plist", app + "/README.md"], "not a property list", 65),
        (["--content-plist", "/nonexistent.plist"], "cannot be read", 65),
        (["--service-plist", "/dev/null"], "not a regular file", 65),
        (["--require-key", "cert_title"], "--require-key needs the content extensions", 64),
        (["--app", app, "--require-key", "level=int"], "unknown type", 64),
        (["--service-plist", app + "/NotificationService/Info.plist", "--allow-http"], "give one", 64),
    ])
    func aPlistThatCannotBeUsedIsUnusableInputAndAWrongOptionAUsageError(
        options: [String], says: String, status: Int32
    ) async throws {
        let payload = #"{"aps":{"alert":"x","mutable-content":1}}"#
        let run = try await RichPushBinary.run(["process"] + options, stdin: Data(payload.utf8))
        #expect(run.status == status, "\(run.stderr)")
        #expect(run.stderr.contains(says), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test func batchCountsTheExpandedViewsAndJUnitFailsAViewThatWouldCrash() async throws {
        let server = try Fixtures.startServer()
        defer { server.stop() }
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let input = folder + "/in"
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        for name in ["content-match-game.json", "content-personalized-missing-key.json", "image-jpg.json"] {
            try FileManager.default.copyItem(
                atPath: Fixtures.root + "/Samples/payloads/" + name, toPath: input + "/" + name)
        }
        let run = try await RichPushBinary.run([
            "batch", input, "--out", folder + "/out", "--no-progress", "--app", Self.app, "--require-key",
            "PersonalizedContent:cert_title", "--cacert", Fixtures.caFile, "--connect-to",
            "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)", "--junit", folder + "/junit.xml",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try JSONValue.parse(
            Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/out/summary.json"))))
        #expect(summary["content_extensions"]?["shows"] == .number("1"))
        #expect(summary["content_extensions"]?["would-crash"] == .number("1"))
        #expect(summary["content_extensions"]?["default"] == .number("1"))
        let junit = try String(contentsOfFile: folder + "/junit.xml", encoding: .utf8)
        #expect(junit.contains("failures=\"1\""))
        #expect(junit.contains("would-crash/missing-key"))
    }
}
