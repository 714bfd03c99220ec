import Foundation
import POSIXKit
import Synchronization
import TestSupport
import Testing

@testable import RichPush
@testable import RichPushRuns

/// A write(2) stand-in that fills the disk once: one call writes part of its bytes, the next fails with ENOSPC.
final class DiskFillingWrite: Sendable {
    private let calls = Mutex(0)
    private let failingCall: Int

    /// Fails part-way through the `failingCall`-th call (1-based); every other call writes everything.
    init(failingCall: Int) { self.failingCall = failingCall }

    var write: Journal.Write {
        { descriptor, buffer in
            let call = self.calls.withLock { calls -> Int in
                calls += 1
                return calls
            }
            if call == self.failingCall {
                return Glibc.write(descriptor, buffer.baseAddress, buffer.count / 2)
            }
            if call == self.failingCall + 1 {
                errno = ENOSPC
                return -1
            }
            return Glibc.write(descriptor, buffer.baseAddress, buffer.count)
        }
    }
}

@Suite struct JournalTests {
    let folder: String

    init() throws { folder = try Fixtures.temporaryFolder() }

    func cleanUp() { try? FileManager.default.removeItem(atPath: folder) }

    func record(_ input: String) -> [UInt8] { Array(#"{"input":"\#(input)","verdict":"attached"}"#.utf8) + [10] }

    func lines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init)
    }

    @Test func anAppendThatFailsPartWayLeavesNoFragmentForTheNextRecord() throws {
        defer { cleanUp() }
        let path = folder + "/journal.ndjson"
        let journal = try Journal(path: path, write: DiskFillingWrite(failingCall: 2).write)
        try journal.append(record("a"))
        do {
            try journal.append(record("b"))
            Issue.record("the append on a full disk succeeded")
        } catch {
            #expect(error.systemError?.code == ENOSPC, "the errno is kept, not only its words")
            #expect(error.message.hasPrefix("cannot append to '\(path)': No space left on device"), "\(error)")
            #expect(error.message.hasSuffix("run the same command again to resume."))
        }
        try journal.append(record("c"))
        #expect(
            try lines(path) == [#"{"input":"a","verdict":"attached"}"#, #"{"input":"c","verdict":"attached"}"#, ""])
        var inputs: [String] = []
        try journal.forEachLine { _, line in inputs += [Journal.input(of: line) ?? "?"] }
        #expect(inputs == ["a", "c"])
    }

    /// Grouped appends go out in one write per group, and at flush; nothing waits in the file half-written.
    @Test func groupedAppendsAreWrittenAGroupAtATimeAndAtFlush() throws {
        defer { cleanUp() }
        let path = folder + "/journal.ndjson"
        let journal = try Journal(
            path: path, grouping: Journal.Grouping(records: 3, bytes: 1 << 20, delay: .seconds(3600)))
        try journal.append(record("a"))
        try journal.append(record("b"))
        #expect(try lines(path) == [""], "two records wait for their group")
        try journal.append(record("c"))
        #expect(try lines(path).count == 4, "the third completes the group: three lines")
        try journal.append(record("d"))
        try journal.flush()
        try journal.flush()
        var inputs: [String] = []
        try journal.forEachLine { _, line in inputs += [Journal.input(of: line) ?? "?"] }
        #expect(inputs == ["a", "b", "c", "d"])
    }

    @Test func aGroupWhoseWriteFailsIsCutBackWholeAndTheNextGroupStartsOnItsOwnLine() throws {
        defer { cleanUp() }
        let path = folder + "/journal.ndjson"
        // The first group's write stops half-way, its retry finds the disk full.
        let journal = try Journal(
            path: path, write: DiskFillingWrite(failingCall: 1).write,
            grouping: Journal.Grouping(records: 2, bytes: 1 << 20, delay: .seconds(3600)))
        try journal.append(record("a"))
        do {
            try journal.append(record("b"))
            Issue.record("the group's write on a full disk succeeded")
        } catch {
            #expect(error.systemError?.code == ENOSPC)
        }
        #expect(try lines(path) == [""], "no fragment of the failed group is left")
        try journal.append(record("c"))
        try journal.append(record("d"))
        var inputs: [String] = []
        try journal.forEachLine { _, line in inputs += [Journal.input(of: line) ?? "?"] }
        #expect(inputs == ["c", "d"])
    }

    /// A verdict that says the client ran out of descriptors is never final: a resume redoes it.
    @Test func aTooManyOpenFilesRecordIsRedoneOnResume() throws {
        defer { cleanUp() }
        let journal = try Journal(path: folder + "/journal.ndjson")
        let lines = [
            #"{"input":"a.json","input_sha256":"aa","elapsed_ms":1,"richpush":{"reason":"ok"}}"#,
            #"{"input":"b.json","input_sha256":"bb","elapsed_ms":1,"richpush":{"reason":"too-many-open-files"}}"#,
            // A message quoting the code is not the reason: its quotes are escaped.
            #"{"input":"c.json","input_sha256":"cc","elapsed_ms":1,"richpush":{"message":"\"reason\":\"too-many-open-files\"","reason":"ok"}}"#,
        ]
        for line in lines { try journal.append(Array((line + "\n").utf8)) }
        #expect(try journal.lastDigests() == ["a.json": "aa", "c.json": "cc"])
        // Redone and now final: the latest record decides.
        try journal.append(
            Array((#"{"input":"b.json","input_sha256":"bb","elapsed_ms":1,"richpush":{"reason":"ok"}}"# + "\n").utf8))
        #expect(try journal.lastDigests() == ["a.json": "aa", "b.json": "bb", "c.json": "cc"])
    }

    @Test func readingRecordsNeverChangesTheFile() throws {
        defer { cleanUp() }
        let path = folder + "/results.ndjson"
        let text = #"{"input":"a","verdict":"attached"}"# + "\n" + #"{"input":"b","ver"#
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        var seen: [String] = []
        try Journal.forEachLine(inFile: path) { _, line in seen += [Journal.input(of: line) ?? "?"] }
        #expect(seen == ["a"], "the torn last line is skipped")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text, "and left as it was")
        #expect(throws: StoreError.self) { try Journal.forEachLine(inFile: folder + "/missing") { _, _ in } }
        do {
            try Journal.forEachLine(inFile: folder + "/missing") { _, _ in }
        } catch {
            #expect(error.systemError == SystemError(code: ENOENT, operation: "read", path: folder + "/missing"))
        }
        #expect(!FileManager.default.fileExists(atPath: folder + "/missing"))
    }

    @Test func startingARunCompactsTheJournalOrEmptiesItForForce() throws {
        defer { cleanUp() }
        let path = folder + "/.richpush/journal.ndjson"
        let store = try AttachmentStore(folder: folder)
        try FileManager.default.createDirectory(atPath: folder + "/.richpush", withIntermediateDirectories: true)
        // Three killed runs' worth of records of two inputs, one of which is no longer in the input.
        let stale = (0..<3).flatMap { _ in record("a") + record("gone") }
        try Data(stale).write(to: URL(fileURLWithPath: path))
        try Journal.prepare(path: path, fresh: false, keeping: ["a", "b"], store: store)
        #expect(try lines(path) == [#"{"input":"a","verdict":"attached"}"#, ""])
        try Journal.prepare(path: path, fresh: true, keeping: ["a", "b"], store: store)
        #expect(try lines(path) == [""])
        #expect(
            Fixtures.files(in: folder + "/.richpush").map { ($0 as NSString).lastPathComponent } == ["journal.ndjson"])
    }
}

/// A batch whose journal fills the disk part-way through a record.
@Suite struct BatchJournalFailureTests {
    let rig: LocalRig

    init() throws { rig = try LocalRig() }

    @Test func aFullDiskStopsTheRunAndTheRerunGivesEveryPayloadOneRecord() async throws {
        defer { rig.cleanUp() }
        let input = rig.folder + "/in"
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        for index in 0..<20 {
            let text =
                #"{"aps":{"alert":"n\#(index)","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.png?n=\#(index)","type":"png"}}}"#
            try Data(text.utf8).write(to: URL(fileURLWithPath: input + "/p\(index).json"))
        }
        let output = try AttachmentStore(folder: rig.folder + "/out")
        let service = ServiceExtension(
            engine: rig.engine, store: try AttachmentStore(folder: rig.folder + "/out/attachments"),
            policy: Fixtures.extensionPolicy(mapping: rig.server, budget: .seconds(60)))
        let items = try BatchInput.items(at: input, recursive: false)
        var failing = BatchRunner(items: items, service: service, output: output, concurrency: 4, force: false)
        failing.journalWrite = DiskFillingWrite(failingCall: 3).write
        // Groups of two records: the third group's write is the one the disk cuts short.
        failing.journalGrouping = Journal.Grouping(records: 2, bytes: 1 << 20, delay: .seconds(3600))
        await #expect(throws: StoreError.self) { try await failing.run() }
        // Whatever else was in flight appended after the failure: every line is a whole record.
        let journal = rig.folder + "/out/.richpush/journal.ndjson"
        let text = try String(contentsOfFile: journal, encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        for line in text.split(separator: "\n") {
            #expect((try? JSONValue.parse(Array(line.utf8))) != nil, "a whole record: \(line)")
        }
        let summary = try await BatchRunner(
            items: items, service: service, output: output, concurrency: 4, force: false
        ).run()
        #expect(summary.recorded == 20 && summary.attached == 20)
        let results = try String(contentsOfFile: rig.folder + "/out/results.ndjson", encoding: .utf8)
        #expect(results.split(separator: "\n").count == 20)
    }
}
