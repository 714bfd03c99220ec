import Foundation
import RichPush
import TestSupport
import Testing

/// A batch set up from its configuration: the shard's payloads, an empty input, a resume with other
/// options, and the `--fail-under` threshold.
@Suite struct BatchSessionTests {
    /// Messages spell settings as the command line does, as users read them.
    init() { useCommandLineSpelling() }

    /// `count` payloads that request no attachment (no download: the run needs no server).
    func writePayloads(_ count: Int, into input: String) throws {
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        for index in 0..<count {
            let text = #"{"aps":{"alert":"n\#(index)"}}"#
            try Data(text.utf8).write(to: URL(fileURLWithPath: input + "/p\(index).json"))
        }
    }

    @Test func aShardTakesEveryNthPayloadOfTheSortedInput() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try writePayloads(7, into: folder + "/in")
        var configuration = BatchConfiguration(input: folder + "/in", outFolder: folder + "/out")
        configuration.shard = Shard(index: 2, count: 3)
        let session = try BatchSession(configuration)
        defer { session.close() }
        #expect(session.items.map(\.name) == ["p1.json", "p4.json"])
    }

    @Test func aFolderWithoutPayloadsIsUnusableInput() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/in", withIntermediateDirectories: true)
        let error = setupError {
            _ = try BatchSession(BatchConfiguration(input: folder + "/in", outFolder: folder + "/out"))
        }
        #expect(isUnusable(error, "no payloads in '\(folder)/in' (looked for *.json)"))
    }

    @Test func aResumeWithAnotherBudgetStopsUnlessForced() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try writePayloads(3, into: folder + "/in")
        var configuration = BatchConfiguration(input: folder + "/in", outFolder: folder + "/out")
        configuration.policy.budget = .seconds(30)
        let first = try BatchSession(configuration)
        let run = try first.start()
        let summary = try await run.run()
        run.close()
        first.close()
        #expect(summary.processed == 3)

        configuration.policy.budget = .seconds(5)
        let error = setupError { _ = try BatchSession(configuration) }
        #expect(error?.code == .changedSettings)
        #expect(error?.message.contains("holds results made with other settings") == true)
        #expect(error?.message.contains("budget") == true)
        // The refused session let go of the folder: a forced one takes it.
        configuration.force = true
        let forced = try BatchSession(configuration)
        forced.close()
    }

    @Test func failUnderNamesTheShareThatWouldShow() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try writePayloads(1, into: folder + "/in")
        var configuration = BatchConfiguration(input: folder + "/in", outFolder: folder + "/out")
        let session = try BatchSession(configuration)
        let run = try session.start()
        var summary = try await run.run()
        run.close()
        session.close()
        summary.displayRate = 0.95
        #expect(configuration.thresholdFailure(summary) == "--fail-under 100 not met: 95.0% would show.")
        configuration.failUnderPercent = 95
        #expect(configuration.thresholdFailure(summary) == nil)
        configuration.failUnderPercent = 95.5
        #expect(configuration.thresholdFailure(summary) == "--fail-under 95.5 not met: 95.0% would show.")
    }
}
