import AssetServer
import Foundation
import RichPush
import RichPushRuns
import TestSupport
import Testing

/// Real outputs against `Samples/schemas/`: the one JSON vocabulary.
@Suite struct OutputSchemaTests {
    let rig: LocalRig
    var folder: String { rig.folder }

    init() throws { rig = try LocalRig() }

    func service(store: AttachmentStore?) -> ServiceExtension {
        ServiceExtension(
            engine: rig.engine, store: store,
            policy: Fixtures.extensionPolicy(mapping: rig.server, budget: .seconds(60)))
    }

    func payload(_ url: String, type: String) -> [UInt8] {
        Array(#"{"aps":{"alert":"a","mutable-content":1},"ab":{"att":{"url":"\#(url)","type":"\#(type)"}}}"#.utf8)
    }

    /// Attached (image and movie, with a sniff and a video track), fallback with and without a
    /// download, not-invoked and rejected outcomes all match the schema, both as built for the payload
    /// and as `Codable` writes them; and `Codable` reads them back as they were.
    @Test func everyKindOfOutcomeMatchesTheOutcomeSchema() async throws {
        defer { rig.cleanUp() }
        let store = try AttachmentStore(folder: folder + "/out")
        defer { store.removeScratch() }
        let inputs: [[UInt8]] = [
            payload("https://cdn.example.com/hero.jpg", type: "jpg"),
            payload("https://cdn.example.com/clip.mp4", type: "mp4"),
            payload("https://cdn.example.com/missing.jpg", type: "jpg"),
            payload("https://cdn.example.com/hero.png", type: "jpg"),
            payload("http://cdn.example.com/hero.jpg", type: "jpg"),
            Array(#"{"aps":{"alert":"a"},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg","type":"jpg"}}}"#.utf8),
            Array(#"{"aps":{"alert":"a"}}"#.utf8),
            Array("not json".utf8),
        ]
        var seen: Set<String> = []
        for input in inputs {
            let result = await service(store: store).process(input)
            let outcome = result.outcome
            seen.insert(outcome.verdict.rawValue)
            #expect(OutputSchemas.violations(of: outcome.json.text, against: "outcome") == [], "\(outcome.summaryLine)")
            // One serializer (json); read back, the outcome writes the same JSON (times are kept to the
            // microsecond), and the indented form of --report is the same value.
            let decoded = try JSONDecoder().decode(Outcome.self, from: Data(outcome.json.text.utf8))
            #expect(decoded.json.text == outcome.json.text)
            #expect(try JSONValue.parse(Array(outcome.json.prettyText.utf8)) == outcome.json)
            #expect(OutputSchemas.violations(of: outcome.json.prettyText, against: "outcome") == [])
            if let mutated = result.mutatedPayload {
                let added = try #require(try JSONValue.parse(mutated)["richpush"])
                #expect(added == outcome.json, "the payload's richpush object is the outcome")
            }
        }
        #expect(seen == ["attached", "fallback", "not-invoked", "no-attachment", "rejected"])
        let movie = await service(store: store).process(payload("https://cdn.example.com/clip.mp4", type: "mp4"))
        #expect(movie.outcome.json["sniff"]?["has_video_track"] == .bool(true))
        #expect(movie.outcome.json["sniff"]?["format"] == .string("mp4"))
        #expect(movie.outcome.json["attachment"]?["class"] == .string("movie"))
    }

    /// Each line of `results.ndjson` matches the batch record schema and `summary.json` its schema.
    @Test func batchRecordsAndSummaryMatchTheirSchemas() async throws {
        defer { rig.cleanUp() }
        try FileManager.default.createDirectory(atPath: folder + "/in", withIntermediateDirectories: true)
        for name in ["image-jpg.json", "not-found.json", "no-attachment.json", "missing-mutable-content.json"] {
            try Data(try SamplePayloads.bytes(name)).write(to: URL(fileURLWithPath: folder + "/in/" + name))
        }
        try Data("{broken".utf8).write(to: URL(fileURLWithPath: folder + "/in/broken.json"))
        let output = try AttachmentStore(folder: folder + "/out")
        let summary = try await BatchRunner(
            items: try BatchInput.items(at: folder + "/in", recursive: false),
            service: service(store: try AttachmentStore(folder: folder + "/out/attachments")), output: output,
            concurrency: 4, force: false
        ).run()
        #expect(summary.recorded == 5)
        let lines = try String(contentsOfFile: folder + "/out/results.ndjson", encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 5)
        for line in lines {
            #expect(OutputSchemas.violations(of: String(line), against: "batch-record") == [], "\(line)")
        }
        let summaryText = try String(contentsOfFile: folder + "/out/summary.json", encoding: .utf8)
        #expect(OutputSchemas.violations(of: summaryText, against: "batch-summary") == [])
        #expect(summaryText.contains("\"download_ms\""))
        // The payload written for the batch carries the same outcome as its record.
        let record = try #require(
            lines.compactMap { try? JSONValue.parse(Array($0.utf8)) }.first {
                $0["input"] == .string("image-jpg.json")
            })
        let written = try JSONValue.parse(
            Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/out/payloads/image-jpg.json"))))
        #expect(written["richpush"]?["attachment"] == record["attachment"])
        #expect(record["download"]?["timings_ms"]?["first_byte"] != nil)
    }

    /// A journal written before the one vocabulary (`elapsed_milliseconds`, `timings_milliseconds`)
    /// is not trusted as complete: its payloads are processed again and every record ends in one shape.
    @Test func recordsOfTheOldShapeAreRedoneOnResume() async throws {
        defer { rig.cleanUp() }
        try FileManager.default.createDirectory(atPath: folder + "/in", withIntermediateDirectories: true)
        let bytes = try SamplePayloads.bytes("no-attachment.json")
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/in/a.json"))
        try FileManager.default.createDirectory(
            atPath: folder + "/out/.richpush", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/out/payloads", withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: folder + "/out/payloads/a.json"))
        let digest = try Fixtures.sha256(ofFile: folder + "/in/a.json")
        let old =
            #"{"elapsed_milliseconds":0.5,"input":"a.json","input_sha256":"\#(digest)","message":"m","output":"payloads/a.json","reason":"no-attachment-requested","verdict":"no-attachment","warnings":[]}"#
        try Data((old + "\n").utf8).write(to: URL(fileURLWithPath: folder + "/out/.richpush/journal.ndjson"))
        let summary = try await BatchRunner(
            items: try BatchInput.items(at: folder + "/in", recursive: false),
            service: service(store: nil), output: try AttachmentStore(folder: folder + "/out"), concurrency: 1,
            force: false
        ).run()
        #expect(summary.processed == 1 && summary.skipped == 0)
        let line = try String(contentsOfFile: folder + "/out/results.ndjson", encoding: .utf8)
        #expect(OutputSchemas.violations(of: line, against: "batch-record") == [], "\(line)")
        #expect(!line.contains("elapsed_milliseconds"))
    }
}

/// The vocabulary's small parts: codes print as they are written, timings round-trip.
@Suite struct VocabularyTests {
    @Test func reasonsAndVerdictsDescribeThemselvesAsTheirCodes() {
        #expect("\(ReasonCode.httpStatus)" == "http-status")
        #expect(String(describing: Verdict.notInvoked) == "not-invoked")
        for reason in ReasonCode.allCases { #expect(reason.description == reason.rawValue) }
    }

    @Test func timingsAreMillisecondsToTheMicrosecondAndReadBackTheSame() throws {
        let timings = FetchTimings(
            queue: .microseconds(12), dns: .microseconds(250), connect: .nanoseconds(1_500_400),
            tls: .milliseconds(4), firstByte: .milliseconds(10), total: .seconds(2))
        let text = timings.json.text
        #expect(text == #"{"queue":0.012,"dns":0.25,"connect":1.5,"tls":4.0,"first_byte":10.0,"total":2000.0}"#)
        let decoded = try JSONDecoder().decode(FetchTimings.self, from: Data(text.utf8))
        #expect(decoded.json.text == text)
        #expect(decoded.connect == .microseconds(1500))
    }

    @Test func reportedMillisecondsNeverTrap() {
        #expect(Duration.milliseconds(reported: .infinity) == .microseconds(Int64.max))
        #expect(Duration.milliseconds(reported: .nan) == .zero)
        #expect(Duration.milliseconds(reported: 1e300) == .microseconds(Int64.max))
        #expect(Duration.milliseconds(reported: -1e300) == .microseconds(Int64.min))
        #expect(Duration.milliseconds(reported: 1.25) == .microseconds(1250))
        #expect(Duration.seconds(Int64.max).inMilliseconds > 9e15, "saturates instead of trapping")
    }

    /// The fuzz corpus's record seeds are in the current shape: each decodes, matches the schema, and
    /// survives a write and a read unchanged (so the fuzzer starts from records it accepts).
    @Test func theFuzzCorpusRecordsAreCurrent() throws {
        let text = try String(contentsOfFile: Fixtures.root + "/Tests/FuzzCorpus/records-three", encoding: .utf8)
        let lines = text.dropFirst().split(separator: "\n").map(String.init)  // the first byte picks the target
        #expect(lines.count == 3)
        for line in lines {
            #expect(OutputSchemas.violations(of: line, against: "batch-record") == [], "\(line)")
            let record = try BatchJSON.recordDecoder.decode(BatchRecord.self, from: Data(line.utf8))
            let again = try BatchJSON.recordDecoder.decode(BatchRecord.self, from: Data(record.jsonLine.utf8))
            #expect(again == record && again.jsonLine == record.jsonLine)
        }
    }
}
