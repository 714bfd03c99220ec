import AssetServer
import Foundation
import RichPush
import RichPushRuns
import TestSupport
import Testing

/// The batch runner in process, against the embedded server.
@Suite struct BatchRunnerTests {
    let rig: LocalRig
    var server: AssetServer { rig.server }
    var engine: FetchEngine { rig.engine }
    var folder: String { rig.folder }

    init() throws { rig = try LocalRig() }

    func cleanUp() { rig.cleanUp() }

    func service(store: AttachmentStore, shared: Bool = false) -> ServiceExtension {
        ServiceExtension(
            engine: engine, store: store, policy: Fixtures.extensionPolicy(mapping: server, budget: .seconds(60)),
            sharedDownloads: shared ? SharedDownloads(engine: engine, store: store) : nil)
    }

    func writePayloads(_ count: Int, url: (Int) -> String, into input: String) throws {
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        for index in 0..<count {
            let text =
                #"{"aps":{"alert":"n\#(index)","mutable-content":1},"ab":{"att":{"url":"\#(url(index))","type":"png"}}}"#
            try Data(text.utf8).write(to: URL(fileURLWithPath: input + "/p\(index).json"))
        }
    }

    @Test func completesSeveralHundredPayloadsWithNoneLost() async throws {
        defer { cleanUp() }
        try writePayloads(300, url: { "https://cdn.example.com/hero.png?n=\($0)" }, into: folder + "/in")
        let output = try AttachmentStore(folder: folder + "/out")
        let runner = BatchRunner(
            items: try BatchInput.items(at: folder + "/in", recursive: false),
            service: service(store: try AttachmentStore(folder: folder + "/out/attachments")), output: output,
            concurrency: 32, force: false)
        let summary = try await runner.run()
        #expect(summary.total == 300 && summary.recorded == 300 && summary.attached == 300)
        #expect(summary.displayRate == 1)
        let lines = try String(contentsOfFile: folder + "/out/results.ndjson", encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 300)
        #expect(Set(lines.compactMap { try? JSONValue.parse(Array($0.utf8))["input"]?.text }).count == 300)
        #expect(Fixtures.files(in: folder + "/out/payloads").count == 300)
    }

    /// The journal holds records in completion order; results.ndjson (and the compacted journal) are
    /// in input order, so identical runs write identical files.
    @Test func resultsAreInInputOrderWhateverOrderPayloadsFinishIn() async throws {
        defer { cleanUp() }
        // The first payloads are the slowest: they finish last.
        try writePayloads(6, url: { "https://cdn.example.com/hero.png?delay=\((5 - $0) * 150)" }, into: folder + "/in")
        let output = try AttachmentStore(folder: folder + "/out")
        let items = try BatchInput.items(at: folder + "/in", recursive: false)
        let runner = BatchRunner(
            items: items, service: service(store: try AttachmentStore(folder: folder + "/out/attachments")),
            output: output, concurrency: 6, force: false)
        let summary = try await runner.run()
        #expect(summary.recorded == 6)
        func inputs(_ path: String) throws -> [String] {
            try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap { line in
                guard case .string(let input)? = try? JSONValue.parse(Array(line.utf8))["input"] else { return nil }
                return input
            }
        }
        #expect(try inputs(folder + "/out/results.ndjson") == items.map(\.name))
        #expect(try inputs(folder + "/out/.richpush/journal.ndjson") == items.map(\.name))
    }

    @Test func resumesWithoutRedoingCompletedPayloads() async throws {
        defer { cleanUp() }
        try writePayloads(10, url: { _ in "https://cdn.example.com/hero.png" }, into: folder + "/in")
        let output = try AttachmentStore(folder: folder + "/out")
        let attachments = try AttachmentStore(folder: folder + "/out/attachments")
        let items = try BatchInput.items(at: folder + "/in", recursive: false)
        let first = try await BatchRunner(
            items: Array(items.prefix(4)), service: service(store: attachments), output: output, concurrency: 4,
            force: false
        ).run()
        #expect(first.recorded == 4)
        let before = server.requestCount
        let second = try await BatchRunner(
            items: items, service: service(store: attachments), output: output, concurrency: 4, force: false
        ).run()
        #expect(second.skipped == 4 && second.processed == 6 && second.recorded == 10)
        #expect(server.requestCount - before == 6, "completed payloads are not downloaded again")
        let forced = try await BatchRunner(
            items: items, service: service(store: attachments), output: output, concurrency: 4, force: true
        ).run()
        #expect(forced.processed == 10 && forced.skipped == 0 && forced.recorded == 10)
    }

    @Test func sharesOneDownloadPerURLWhenAsked() async throws {
        defer { cleanUp() }
        try writePayloads(40, url: { _ in "https://cdn.example.com/hero.png?shared=1" }, into: folder + "/in")
        let attachments = try AttachmentStore(folder: folder + "/out/attachments")
        let runner = BatchRunner(
            items: try BatchInput.items(at: folder + "/in", recursive: false),
            service: service(store: attachments, shared: true), output: try AttachmentStore(folder: folder + "/out"),
            concurrency: 16, force: false)
        let summary = try await runner.run()
        #expect(summary.attached == 40)
        #expect(server.requestCount == 1)
        await runner.service.sharedDownloads?.removeAll()
        attachments.removeScratch()
        #expect(Fixtures.files(in: attachments.folder).count == 1, "one stored file, no cache files left")
    }

    @Test func readsEveryLineOfAnNDJSONFile() async throws {
        defer { cleanUp() }
        let ok =
            #"{"aps":{"alert":"a","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg","type":"jpg"}}}"#
        let text = ok + "\n\n" + "{broken\n" + #"{"aps":{"alert":"b"}}"# + "\n" + ok
        try Data(text.utf8).write(to: URL(fileURLWithPath: folder + "/campaign.ndjson"))
        let items = try BatchInput.items(at: folder + "/campaign.ndjson", recursive: false)
        #expect(
            items.map(\.name) == ["campaign.ndjson:1", "campaign.ndjson:3", "campaign.ndjson:4", "campaign.ndjson:5"])
        #expect(items.map(\.outputName).first == "campaign/000001.json")
        let summary = try await BatchRunner(
            items: items, service: service(store: try AttachmentStore(folder: folder + "/out/attachments")),
            output: try AttachmentStore(folder: folder + "/out"), concurrency: 4, force: false
        ).run()
        #expect(summary.verdicts == ["attached": 2, "rejected": 1, "no-attachment": 1])
        #expect(Fixtures.files(in: folder + "/out/payloads/campaign").count == 4)
    }

    @Test func resumeMatchesNDJSONLinesByContentNotPosition() async throws {
        defer { cleanUp() }
        let attached =
            #"{"aps":{"alert":"a","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg","type":"jpg"}}}"#
        let plain = #"{"aps":{"alert":"b"}}"#
        let path = folder + "/campaign.ndjson"
        let output = try AttachmentStore(folder: folder + "/out")
        let attachments = try AttachmentStore(folder: folder + "/out/attachments")
        func run() async throws -> (BatchSummary, [String: String]) {
            let summary = try await BatchRunner(
                items: try BatchInput.items(at: path, recursive: false), service: service(store: attachments),
                output: output, concurrency: 2, force: false
            ).run()
            let lines = try String(contentsOfFile: folder + "/out/results.ndjson", encoding: .utf8)
            var verdicts: [String: String] = [:]
            for line in lines.split(separator: "\n") {
                let record = try JSONValue.parse(Array(line.utf8))
                if case .string(let input) = record["input"], case .string(let verdict) = record["verdict"] {
                    verdicts[input] = verdict
                }
            }
            return (summary, verdicts)
        }
        try Data((attached + "\n" + plain + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let (first, _) = try await run()
        #expect(first.processed == 2)
        // A line inserted at the top moves every other line down: each position now holds other bytes.
        try Data(("{broken\n" + attached + "\n" + plain + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let (second, verdicts) = try await run()
        #expect(second.processed == 3 && second.skipped == 0)
        #expect(
            verdicts == [
                "campaign.ndjson:1": "rejected", "campaign.ndjson:2": "attached", "campaign.ndjson:3": "no-attachment",
            ])
        let (third, _) = try await run()
        #expect(third.processed == 0 && third.skipped == 3, "unchanged lines are skipped")
        // Records written before digests existed are redone.
        let journal = folder + "/out/.richpush/journal.ndjson"
        let old = try String(contentsOfFile: journal, encoding: .utf8)
            .replacing(/"input_sha256":"[0-9a-f]+",/, with: "")
        try Data(old.utf8).write(to: URL(fileURLWithPath: journal))
        let (fourth, _) = try await run()
        #expect(fourth.processed == 3 && fourth.skipped == 0)
    }

    /// Runs the batch over `input` and returns each record by input name.
    func records(of input: String) async throws -> [String: JSONValue] {
        _ = try await BatchRunner(
            items: try BatchInput.items(at: input, recursive: true),
            service: service(store: try AttachmentStore(folder: folder + "/out/attachments")),
            output: try AttachmentStore(folder: folder + "/out"), concurrency: 4, force: false
        ).run()
        var byInput: [String: JSONValue] = [:]
        for line in try String(contentsOfFile: folder + "/out/results.ndjson", encoding: .utf8).split(separator: "\n") {
            let record = try JSONValue.parse(Array(line.utf8))
            if case .string(let input) = record["input"] { byInput[input] = record }
        }
        return byInput
    }

    @Test func processesFilesWhoseNamesAreNotUTF8() async throws {
        defer { cleanUp() }
        let input = folder + "/in"
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        let path = Array((input + "/caf").utf8) + [0xE9, 0x0A] + Array(".json".utf8)  // Latin-1 é, then a newline
        let descriptor = open(path.map { CChar(bitPattern: $0) } + [0], O_WRONLY | O_CREAT | O_EXCL, 0o600)
        #expect(descriptor >= 0)
        let payload = Array(#"{"aps":{"alert":"plain"}}"#.utf8)
        #expect(payload.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == payload.count)
        close(descriptor)
        let byInput = try await records(of: input)
        #expect(Array(byInput.keys) == [#"caf\xE9\x0A.json"#])
        #expect(byInput[#"caf\xE9\x0A.json"#]?["verdict"] == .string("no-attachment"))
        #expect(FileManager.default.fileExists(atPath: folder + #"/out/payloads/caf\xE9\x0A.json"#))
    }

    @Test(.timeLimit(.minutes(1)))
    func refusesLinksOutOfTheInputFolderAndFilesThatAreNotRegular() async throws {
        defer { cleanUp() }
        let input = folder + "/in"
        try FileManager.default.createDirectory(atPath: input + "/sub", withIntermediateDirectories: true)
        let plain = Data(#"{"aps":{"alert":"plain"}}"#.utf8)
        try plain.write(to: URL(fileURLWithPath: folder + "/secret.json"))
        try plain.write(to: URL(fileURLWithPath: input + "/sub/real.txt"))
        try FileManager.default.createSymbolicLink(atPath: input + "/out.json", withDestinationPath: "../secret.json")
        try FileManager.default.createSymbolicLink(atPath: input + "/in.json", withDestinationPath: "sub/real.txt")
        try FileManager.default.createSymbolicLink(
            atPath: input + "/sub/up.json", withDestinationPath: "../../secret.json")
        try FileManager.default.createSymbolicLink(atPath: input + "/linked", withDestinationPath: folder)
        #expect(mkfifo(input + "/fifo.json", 0o600) == 0)
        let byInput = try await records(of: input)
        #expect(Set(byInput.keys) == ["out.json", "in.json", "sub/up.json", "fifo.json"], "linked/ is not descended")
        #expect(byInput["in.json"]?["verdict"] == .string("no-attachment"), "a link inside the folder is read")
        for name in ["out.json", "sub/up.json"] {
            #expect(byInput[name]?["reason"] == .string("unreadable-input"))
            guard case .string(let message) = byInput[name]?["message"] else { continue }
            #expect(message.contains("outside the input folder"), "\(message)")
            #expect(!message.contains("plain"))
        }
        #expect(byInput["fifo.json"]?["reason"] == .string("unreadable-input"))
    }

    @Test func findsPayloadsBelowTheFolderOnlyWhenRecursive() throws {
        defer { cleanUp() }
        try FileManager.default.createDirectory(atPath: folder + "/in/sub", withIntermediateDirectories: true)
        for name in ["a.json", "sub/b.json", "notes.txt"] {
            _ = FileManager.default.createFile(atPath: folder + "/in/" + name, contents: Data("{}".utf8))
        }
        #expect(try BatchInput.items(at: folder + "/in", recursive: false).map(\.name) == ["a.json"])
        #expect(try BatchInput.items(at: folder + "/in", recursive: true).map(\.name) == ["a.json", "sub/b.json"])
        let missing = #expect(throws: BatchInputError.self) {
            try BatchInput.items(at: folder + "/nothing", recursive: false)
        }
        #expect(missing?.kind == .input, "an input that cannot be used: exit 65")
    }
}

@Suite struct BatchRecordTests {
    @Test func writesTheSameJSONFoundationWouldRead() throws {
        var outcome = Outcome(
            verdict: .fallback, reason: .httpStatus, message: "a \"quoted\" message\nwith a newline", hint: "h",
            payloadBytes: 120)
        outcome.url = "https://cdn.example.com/a.jpg?x=1&y=\"2\""
        outcome.warnings = [Warning("type-normalized", "m")]
        let item = BatchItem(
            name: "dir/é.json", outputName: "dir/é.json",
            source: .file(path: Array("/nonexistent".utf8), folder: Array("/".utf8)))
        let record = BatchRecord(item: item, output: "payloads/dir/é.json", outcome: outcome)
        let line = record.jsonLine
        #expect(line.hasSuffix("\n") && line.filter { $0 == "\n" }.count == 1)
        let decoded = try BatchJSON.recordDecoder.decode(BatchRecord.self, from: Data(line.utf8))
        #expect(decoded == record)
    }
}
