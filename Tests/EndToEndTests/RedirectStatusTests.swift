import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// Redirects and error statuses through the binary, as URLSession handles them: which statuses are
/// followed, how many, and what a download task leaves the extension on a 4xx or 5xx.
@Suite struct RedirectStatusTests {
    let server: AssetServer
    let folder: String

    init() throws {
        server = try Fixtures.startServer()
        folder = try Fixtures.temporaryFolder()
    }

    func cleanUp() {
        server.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// `process` on a Braze payload for `path` on the sample host; the outcome from stdout.
    func process(_ path: String) async throws -> (BinaryRun, JSONValue?) {
        let payload =
            #"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/\#(path)","type":"jpg"}}}"#
        let run = try await RichPushBinary.run(
            ["process", "--out", folder + "/out", "--budget", "60"] + Fixtures.sampleHost(server),
            stdin: Data(payload.utf8), directory: folder)
        return (run, (try? JSONValue.parse(Array(run.stdout.utf8)))?["richpush"])
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func followsTheStatusesURLSessionFollows(code: Int) async throws {
        defer { cleanUp() }
        let (run, outcome) = try await process("hero.jpg?redirect=3&code=\(code)")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(outcome?["verdict"] == .string("attached"))
        #expect(outcome?["download"]?["redirects"] == .number("3"))
    }

    @Test(arguments: [300, 304, 305])
    func stopsAtTheStatusesURLSessionDoesNotFollow(code: Int) async throws {
        defer { cleanUp() }
        let (run, outcome) = try await process("hero.jpg?redirect=1&code=\(code)")
        #expect(run.status == 1)
        #expect(outcome?["reason"] == .string("http-status"), "\(run.stderr)")
        #expect(outcome?["download"]?["status"] == .number(String(code)))
        #expect(run.stderr.contains("URLSession does not follow"), "\(run.stderr)")
        #expect(server.requestCount == 1)
    }

    @Test func followsTwentyRedirectsAndNoMore() async throws {
        defer { cleanUp() }
        let (twenty, attached) = try await process("hero.jpg?redirect=20")
        #expect(twenty.status == 0, "\(twenty.stderr)")
        #expect(attached?["download"]?["redirects"] == .number("20"))
        let (more, refused) = try await process("hero.jpg?redirect=21")
        #expect(more.status == 1)
        #expect(refused?["reason"] == .string("too-many-redirects"), "\(more.stderr)")
    }

    @Test func saysWhatThePhoneShowsForAnErrorPage() async throws {
        defer { cleanUp() }
        let (run, outcome) = try await process("hero.jpg?status=404")
        #expect(run.status == 1)
        #expect(outcome?["verdict"] == .string("fallback"))
        #expect(outcome?["reason"] == .string("http-status"))
        guard case .string(let message)? = outcome?["message"] else {
            Issue.record("no message: \(run.stdout)")
            return
        }
        #expect(message.contains("answered HTTP 404"), "\(message)")
        #expect(message.contains("Braze's extension saves the"), "\(message)")
        #expect(message.contains("text/html"), "\(message)")
        #expect(message.contains("the phone shows the plain notification"), "\(message)")
    }

    @Test func saysThePhoneShowsAnErrorResponseThatIsAnImage() async throws {
        defer { cleanUp() }
        let (run, outcome) = try await process("hero.jpg?status=404&status-body=asset")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(outcome?["verdict"] == .string("attached"))
        guard case .array(let warnings)? = outcome?["warnings"] else {
            Issue.record("no warnings: \(run.stdout)")
            return
        }
        #expect(warnings.first?["code"] == .string("error-body-attached"), "\(run.stdout)")
        #expect(outcome?["download"]?["status"] == .number("404"))
    }
}
