import Foundation
import TestSupport
import Testing

/// Running out of file descriptors is the client's fault: bench checks its limit before a run.
/// (`process` at a tiny limit is a hostile-input case.)
@Suite struct DescriptorLimitTests {
    static let prlimit = "/usr/bin/prlimit"

    func run(_ arguments: [String], limit: Int) async throws -> BinaryRun {
        try await RichPushBinary.start(
            arguments, directory: Fixtures.root, launcher: [Self.prlimit, "--nofile=\(limit):\(limit)"]
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
}
