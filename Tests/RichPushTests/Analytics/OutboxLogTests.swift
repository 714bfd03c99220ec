import Foundation
import TestSupport
import Testing

@testable import RichPush
@testable import RichPushServices

/// The outbox as an append-only log: torn tails, garbage, the old format refused, compaction, and the bytes a
/// request writes (the same for a small and a large outbox).
@Suite struct OutboxLogTests {
    /// A fresh folder and the outbox path in it.
    func scratch() throws -> (folder: String, path: String) {
        let folder = try Fixtures.temporaryFolder("richpush-outbox")
        return (folder, folder + "/.group.test.richpush-outbox.json")
    }

    func items(_ count: Int, claim: String = "c1") -> [Outbox.Item] {
        (0..<count).map {
            Outbox.Item(
                id: "\(claim)-\($0)", claim: claim, kind: .event, name: "tap", time: "2024-03-01T12:00:00.000Z",
                fields: [.init(key: "seq", value: .integer(Int64($0)))])
        }
    }

    func append(_ bytes: String, to path: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(bytes.utf8))
        try handle.close()
    }

    @Test func aTornLastLineIsIgnoredAndCutOffBeforeTheNextAppend() throws {
        let (folder, path) = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = try OutboxLog.open(path)
        try log.append(.queued(claim: "c1", items: items(3)))
        try log.append(.confirmed(claim: "c1"))
        try log.append(.sending(ids: ["c1-0", "c1-1"]))
        try log.finish()
        let before = try #require(try Outbox.load(from: path))
        #expect(before.items.filter(\.sending).map(\.id) == ["c1-0", "c1-1"])
        // Killed in the middle of appending the acknowledgement.
        try append(#"{"ids":["c1-0","c1-1"],"state":"ackno"#, to: path)
        #expect(try Outbox.load(from: path) == before, "the torn append never happened")
        let resumed = try OutboxLog.open(path)
        #expect(resumed.outbox == before)
        try resumed.append(.unsent(ids: ["c1-0", "c1-1"]))
        try resumed.finish()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!text.contains("ackno"), "the torn tail was cut off: \(text)")
        #expect(try Outbox.load(from: path)?.items.allSatisfy { !$0.sending } == true)
    }

    @Test(arguments: [
        "garbage\n", "{\"state\":\"sending\"}\n", "{\"state\":\"log\",\"version\":2}\n",
        "{\"ids\":[1],\"state\":\"unsent\"}\n",
    ])
    func aLineThatIsNotAChangeBeforeTheLastMakesTheOutboxUnusable(line: String) throws {
        let (folder, path) = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = try OutboxLog.open(path)
        try log.append(.queued(claim: "c1", items: items(2)))
        try append(line, to: path)
        try append(#"{"claim":"c1","state":"confirmed"}"# + "\n", to: path)
        #expect(throws: AnalyticsError.self) { try Outbox.load(from: path) }
        do { _ = try Outbox.load(from: path) } catch { #expect(error.code == .outboxUnreadable) }
    }

    @Test(arguments: [Array("not an outbox".utf8), [0xff, 0x00, 0x7b], Array("{\"version\":1}".utf8)])
    func bytesThatAreNeitherFormatAreUnusable(bytes: [UInt8]) throws {
        let (folder, path) = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        do {
            _ = try Outbox.load(from: path)
            Issue.record("read as an outbox")
        } catch {
            #expect(error.code == .outboxUnreadable)
            #expect(error.message.contains(path))
        }
    }

    /// The old format (one JSON object, replaced whole on every write) is not read any more: such a
    /// file is refused as unusable, naming itself, and is never overwritten.
    @Test func anOutboxOfTheOldFormatIsRefusedAndKept() throws {
        let (folder, path) = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var old = Outbox()
        old.items = items(4)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let bytes = try encoder.encode(old)
        try bytes.write(to: URL(fileURLWithPath: path))
        do {
            _ = try OutboxLog.open(path)
            Issue.record("an old-format outbox was read")
        } catch {
            #expect(error.code == .outboxUnreadable && error.message.contains("no complete line"), "\(error)")
        }
        #expect(FileManager.default.contents(atPath: path) == bytes)
    }

    @Test func theLogIsCompactedOnceItOutgrowsItsSnapshot() throws {
        let (folder, path) = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = try OutboxLog.open(path)
        try log.append(.queued(claim: "c1", items: items(10)))
        try log.append(.confirmed(claim: "c1"))
        var largest = 0
        for _ in 0..<5000 {
            try log.append(.sending(ids: ["c1-0"]))
            try log.append(.unsent(ids: ["c1-0"]))
            largest = max(largest, log.fileBytes)
        }
        #expect(largest <= OutboxLog.compactionFloor + 4096, "compacted: \(largest) bytes at most")
        #expect(try Outbox.load(from: path)?.items.first?.sends == 5000, "nothing lost across compactions")
        try log.append(.acknowledged(ids: items(10).map(\.id), rejected: []))
        #expect(!FileManager.default.fileExists(atPath: path), "an empty outbox is removed")
    }

    /// A stand-in endpoint that accepts everything at once.
    struct Accepting: TrackSending {
        func send(_ body: TrackBody) async -> TrackExchange {
            .answered(status: 201, body: Array(#"{"message":"success"}"#.utf8), headers: [:])
        }
    }

    /// The bytes the outbox log took for each request of a flush of `events` events (after the claim).
    func bytesPerRequest(events: Int) async throws -> [Int] {
        let folder = try Fixtures.temporaryFolder("richpush-outbox-flush")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(
            atPath: folder + "/Library/Preferences", withIntermediateDirectories: true)
        let suite = try AppGroupSuite(container: folder, suite: "group.test")
        try SuiteRecorder.record(
            (0..<events).map { .event(name: "tap", properties: [.init(key: "seq", value: .integer(Int64($0)))]) },
            in: suite)
        var options = FlushOptions(user: .externalID("u1"))
        options.requestsPerSecond = 1e9
        var marks: [Int] = []
        let summary = try await AnalyticsFlush.run(
            suite: suite, client: Accepting(), options: options, progress: { _ in },
            observe: { marks.append($0.bytesWritten) })
        #expect(summary.isComplete && summary.accepted == events)
        return zip(marks.dropFirst(), marks).map { $0 - $1 }
    }

    /// The quadratic I/O of the old outbox: it was rewritten whole twice per request.
    @Test func aRequestWritesTheSameBytesHoweverLargeTheOutbox() async throws {
        let small = try await bytesPerRequest(events: 150)
        let large = try await bytesPerRequest(events: 3_000)
        #expect(small.count == 2 && large.count == 40)
        let smallest = try #require(small.max())
        // Each request appends its ids twice (sending, acknowledged): a few kilobytes, not the outbox.
        #expect(smallest < 16 << 10, "\(small)")
        #expect(large.allSatisfy { $0 <= 2 * smallest }, "per request: \(Set(large).sorted())")
    }
}
