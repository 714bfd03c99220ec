import Foundation
import TestSupport
import Testing

/// Running out of file descriptors is the client's fault, and richpush says so instead of blaming the
/// host (or libcurl's installation).
@Suite struct DescriptorLimitTests {
    static let prlimit = "/usr/bin/prlimit"

    func run(_ arguments: [String], limit: Int, stdin: Data = Data()) async throws -> BinaryRun {
        try await RichPushBinary.start(
            arguments, stdin: stdin, directory: Fixtures.root, launcher: [Self.prlimit, "--nofile=\(limit):\(limit)"]
        ).wait()
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: prlimit)))
    func benchRefusesAConcurrencyTheDescriptorLimitCannotHold() async throws {
        let run = try await run(
            ["bench", "--serve", Fixtures.assets, "--devices", "300", "--concurrency", "300", "--no-progress"],
            limit: 200)
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("ulimit -n"), "\(run.stderr)")
        #expect(run.stderr.contains("--concurrency"), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: prlimit)))
    func processSaysTheLimitNotThatLibcurlIsMissing() async throws {
        let payload =
            #"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/a.jpg","type":"jpg"}}}"#
        let run = try await run(["process"], limit: 7, stdin: Data(payload.utf8))
        #expect(run.status != 0)
        #expect(!run.stderr.contains("installed"), "\(run.stderr)")
        #expect(run.stderr.contains("file descriptor") || run.stderr.contains("Too many open files"), "\(run.stderr)")
    }
}
