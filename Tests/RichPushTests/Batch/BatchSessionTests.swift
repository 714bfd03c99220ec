import Foundation
import RichPush
import RichPushRuns
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

    /// A resume is the same run (its summary keeps the run id); --force and another folder are new runs.
    @Test func aResumeKeepsTheRunIDAndShardsOfOneCampaignShareTheDigest() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try writePayloads(4, into: folder + "/in")
        func run(_ out: String, shard: Int, force: Bool = false) async throws -> BatchSummary {
            var configuration = BatchConfiguration(input: folder + "/in", outFolder: folder + "/" + out)
            configuration.shard = Shard(index: shard, count: 2)
            configuration.force = force
            let session = try BatchSession(configuration)
            defer { session.close() }
            let run = try session.start()
            defer { run.close() }
            return try await run.run()
        }
        let first = try #require(try await run("one", shard: 1).identity)
        let resumed = try #require(try await run("one", shard: 1).identity)
        #expect(resumed == first && first.runs.count == 1 && first.runs[0].shard == 1 && first.shardCount == 2)
        let forced = try #require(try await run("one", shard: 1, force: true).identity)
        #expect(forced.runs[0].id != first.runs[0].id && forced.optionsDigest == first.optionsDigest)
        let other = try #require(try await run("two", shard: 2).identity)
        #expect(other.runs[0].id != first.runs[0].id && other.optionsDigest == first.optionsDigest)
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

    @Test func theGateNamesTheShareThatWouldShow() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try writePayloads(1, into: folder + "/in")
        let configuration = BatchConfiguration(input: folder + "/in", outFolder: folder + "/out")
        let session = try BatchSession(configuration)
        let run = try session.start()
        var summary = try await run.run()
        run.close()
        session.close()
        // The run decided its gate into summary.json: the defaults, all met.
        #expect(summary.passed != nil && summary.thresholds?.count == 3)
        (summary.requested, summary.attached) = (20, 19)
        summary.decide([])
        #expect(
            GateDecision(summary).failed.map(\.message) == [
                "display 95.0% fails the threshold display>=100% by 5 points"
            ])
        summary.decide([Threshold(.display, .greaterOrEqual, 95)])
        #expect(GateDecision(summary).passed)
        summary.decide([Threshold(.display, .greaterOrEqual, 95.5)])
        #expect(
            GateDecision(summary).failed.map(\.message) == [
                "display 95.0% fails the threshold display>=95.5% by 0.5 points"
            ])
        _ = configuration
    }
}
