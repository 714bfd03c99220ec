import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// `richpush fetch`'s configuration and session: the URL checks made before the engine starts, one
/// download and a repeat run against the embedded server, and the lines and exit codes they give.
@Suite struct FetchSessionTests {
    @Test func aConfigurationForOneURL() throws {
        let configuration = try FetchConfiguration(url: "http://a/x.jpg", policy: FetchPolicy())
        #expect(configuration.url == "http://a/x.jpg")
        #expect(configuration.budget == .seconds(30))
        #expect(configuration.repeatCount == nil)
    }

    @Test func aURLWithoutSchemeIsShownWithHTTPS() {
        let error = setupError {
            _ = try FetchConfiguration(url: "//cdn.example.com/a.jpg", policy: FetchPolicy())
        }
        #expect(error?.code == .invalidValue)
        #expect(
            error?.message == "'//cdn.example.com/a.jpg' has no scheme; did you mean https://cdn.example.com/a.jpg ?")
        let other = setupError { try FetchConfiguration.checkScheme("ftp://host/a.jpg") }
        #expect(other?.message == "'ftp://host/a.jpg': richpush downloads http:// and https:// URLs only, not ftp://")
        // The scheme is matched without regard to case.
        #expect(setupError { try FetchConfiguration.checkScheme("HTTPS://host/a.jpg") } == nil)
    }

    @Test func theRequestCarriesTheBudgetAndPolicy() throws {
        var policy = FetchPolicy()
        policy.allowHTTP = true
        var configuration = try FetchConfiguration(url: "http://a/x.jpg", policy: policy)
        configuration.budget = .milliseconds(1500)
        let before = ContinuousClock.now
        let request = configuration.request
        #expect(request.url == "http://a/x.jpg")
        // The deadline is the budget from the moment the request is made.
        #expect(request.deadline >= before + .milliseconds(1500))
        #expect(request.deadline < ContinuousClock.now + .milliseconds(1500) + .seconds(1))
        #expect(request.policy.allowHTTP)
    }

    @Test func oneDownloadAndItsLineAndExitCode() async throws {
        let server = try Fixtures.startServer()
        defer { server.stop() }
        let policy = Fixtures.fetchPolicy(mapping: server)
        let session = try FetchSession(
            FetchConfiguration(url: "https://cdn.example.com/hero.jpg", policy: policy))
        defer { session.close() }
        let outcome = await session.download(writingTo: -1)
        let bytes = try Fixtures.bytes(ofAsset: "hero.jpg").count
        #expect(FetchSession.summaryLine(outcome).hasPrefix("HTTP 200, \(bytes) bytes in "))
        let report = FetchSession.report(outcome, url: "https://cdn.example.com/hero.jpg")
        #expect(report.ok && report.download?.bytes == Int64(bytes) && report.reason == nil)

        let missing = try FetchSession(
            FetchConfiguration(url: "https://cdn.example.com/missing.jpg", policy: policy))
        defer { missing.close() }
        let failed = await missing.download(writingTo: -1)
        #expect(FetchSession.summaryLine(failed).hasPrefix("http-status: "))
        #expect(FetchSession.report(failed, url: "u").reason == "http-status")
    }

    @Test func aBodyThatCannotBeStoredIsAnOutputFailureOnlyWithAnOutput() {
        let outcome = Result<FetchResult, FetchError>.failure(FetchError(.storageFailed, "disk full"))

        #expect(FetchSession.summaryLine(outcome) == "storage-failed: disk full")
        let hostile = Result<FetchResult, FetchError>.failure(FetchError(.httpStatus, "line\nforged"))
        #expect(!FetchSession.summaryLine(hostile).contains("\n"))
    }

    @Test func aRepeatRunCountsEveryDownload() async throws {
        let server = try Fixtures.startServer()
        defer { server.stop() }
        var configuration = try FetchConfiguration(
            url: "https://cdn.example.com/hero.jpg", policy: Fixtures.fetchPolicy(mapping: server))
        configuration.repeatCount = 6
        configuration.parallel = 2
        configuration.loops = 1
        let session = try FetchSession(configuration)
        defer { session.close() }
        let summary = await session.repeated()
        #expect(summary.downloads == 6 && summary.succeeded == 6 && summary.concurrency == 2)
        #expect(FetchSession.summaryLine(summary).hasPrefix("6 downloads, 6 ok, "))
    }
}
