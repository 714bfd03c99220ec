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
        let options = [
            "--no-progress", "--app", Self.app, "--require-key", "PersonalizedContent:cert_title", "--cacert",
            Fixtures.caFile, "--connect-to", "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)",
        ]
        let run = try await RichPushBinary.run(
            ["batch", input, "--out", folder + "/out", "--junit", folder + "/junit.xml"] + options)
        // Every attachment shows, but one would crash its content extension: the gate fails, and the
        // exit status, the JUnit file and the stderr summary say so together.
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("1 payload would crash the content extension"), "\(run.stderr)")
        #expect(run.stderr.contains("FAIL would_crash 1 fails the threshold would_crash==0"), "\(run.stderr)")
        let summary = try JSONValue.parse(
            Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/out/summary.json"))))
        #expect(summary["content_extensions"]?["shows"] == .number("1"))
        #expect(summary["content_extensions"]?["would-crash"] == .number("1"))
        #expect(summary["content_extensions"]?["default"] == .number("1"))
        #expect(summary["passed"] == .bool(false))
        let junit = try String(contentsOfFile: folder + "/junit.xml", encoding: .utf8)
        // The payload's failure and the gate's.
        #expect(junit.contains("failures=\"2\""), "\(junit)")
        #expect(junit.contains("would-crash/missing-key"))
        #expect(junit.contains(#"classname="richpush.gate" name="would_crash==0" time="0.000">"#))
        // Relaxed on purpose: the gate passes, and its JUnit case with it.
        let relaxed = try await RichPushBinary.run(
            [
                "batch", input, "--out", folder + "/relaxed", "--junit", folder + "/relaxed.xml", "--threshold",
                "would_crash<=1",
            ] + options)
        #expect(relaxed.status == 0, "\(relaxed.stderr)")
        let relaxedJUnit = try String(contentsOfFile: folder + "/relaxed.xml", encoding: .utf8)
        let relaxedCase = #"classname="richpush.gate" name="would_crash&lt;=1" time="0.000"/>"#
        #expect(relaxedJUnit.contains(relaxedCase), "\(relaxedJUnit)")
    }

    @Test func processOfAPayloadWhoseContentExtensionWouldCrashIsNotAttached() async throws {
        let server = try Fixtures.startServer()
        defer { server.stop() }
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try await RichPushBinary.run([
            "process", Fixtures.root + "/Samples/payloads/content-personalized-missing-key.json", "--out",
            folder + "/out", "--app", Self.app, "--require-key", "PersonalizedContent:cert_title", "--cacert",
            Fixtures.caFile, "--connect-to", "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)",
        ])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.hasPrefix("richpush: would-crash [missing-key]"), "\(run.stderr)")
    }
}
