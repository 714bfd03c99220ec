import AssetServer
import Foundation
import FoundationXML
import RichPush
import TestSupport
import Testing

/// `richpush batch` run as a user would: mixed input, exit codes, JUnit, interruption and resume.
@Suite struct BatchCommandTests {
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

    var options: [String] {
        [
            // Room on a loaded machine for the samples that attach and the 2 s server delays of the resume
            // test, and under the 40 s the slow samples' server holds its answer, so those still expire.
            "--budget", "\(SamplePayloads.budgetSeconds)", "--cacert", Fixtures.caFile,
            "--connect-to",
            "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)",
        ]
    }

    func records(_ out: String) throws -> [String: JSONValue] {
        let text = try String(contentsOfFile: out + "/results.ndjson", encoding: .utf8)
        var byInput: [String: JSONValue] = [:]
        for line in text.split(separator: "\n") {
            let record = try JSONValue.parse(Array(line.utf8))
            guard case .string(let input) = record["input"] else { continue }
            #expect(byInput[input] == nil, "\(input) has two records")
            byInput[input] = record
        }
        return byInput
    }

    func leftovers(_ out: String) -> [String] {
        Fixtures.files(in: out).filter { $0.hasSuffix(".part") || $0.contains(".richpush-") }
    }

    /// `--share-downloads`: one request per URL however many payloads name it, each payload its own
    /// verdict, the URL's own failure given to all, and no cache file left in the output afterwards.
    @Test func sharesOneDownloadPerURLAndLeavesNoCacheFile() async throws {
        defer { cleanUp() }
        let input = folder + "/in"
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        for index in 0..<6 {
            let asset = index < 4 ? "hero.jpg" : "missing.jpg"
            let text =
                #"{"aps":{"alert":"n\#(index)","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/\#(asset)","type":"jpg"}}}"#
            _ = FileManager.default.createFile(atPath: input + "/p\(index).json", contents: Data(text.utf8))
        }
        let out = folder + "/out"
        let run = try await RichPushBinary.run(
            ["batch", input, "--out", out, "--share-downloads", "--concurrency", "6", "--no-progress"] + options)
        #expect(run.status == 1, "two payloads fall back: \(run.stderr)")
        let byInput = try records(out)
        for index in 0..<6 {
            let expected = index < 4 ? "ok" : "http-status"
            #expect(byInput["p\(index).json"]?["reason"] == .string(expected), "p\(index).json")
        }
        #expect(server.requestCount == 2, "one request per URL")
        #expect(Fixtures.files(in: out).filter { $0.contains(".richpush-shared-") }.isEmpty, "the cache files are gone")
        #expect(leftovers(out).isEmpty)
    }

    @Test func givesEveryPayloadOneRecordWhateverItIs() async throws {
        defer { cleanUp() }
        let input = folder + "/in"
        try FileManager.default.copyItem(atPath: SamplePayloads.folder, toPath: input)
        _ = FileManager.default.createFile(atPath: input + "/broken.json", contents: Data("{not json".utf8))
        _ = FileManager.default.createFile(atPath: input + "/array.json", contents: Data("[1,2]".utf8))
        let huge = #"{"aps":{"alert":"x"},"pad":""# + String(repeating: "y", count: 6000) + #""}"#
        _ = FileManager.default.createFile(atPath: input + "/huge.json", contents: Data(huge.utf8))
        try FileManager.default.createSymbolicLink(
            atPath: input + "/unreadable.json", withDestinationPath: "/nonexistent")
        let out = folder + "/out"
        let run = try await RichPushBinary.run(
            // Each sample names its SDK by its keys (Samples/expected.tsv): --sdk auto.
            ["batch", input, "--out", out, "--junit", out + "/junit.xml", "--no-progress", "--sdk", "auto"] + options)
        #expect(run.status == 1, "\(run.stderr)")
        let byInput = try records(out)
        #expect(byInput.count == SamplePayloads.expectations.count + 4)
        for expected in SamplePayloads.expectations {
            #expect(byInput[expected.name]?["verdict"] == .string(expected.verdict), "\(expected.name)")
            #expect(byInput[expected.name]?["reason"] == .string(expected.reason), "\(expected.name)")
        }
        #expect(byInput["broken.json"]?["reason"] == .string("invalid-json"))
        #expect(byInput["array.json"]?["reason"] == .string("not-an-object"))
        #expect(byInput["huge.json"]?["reason"] == .string("payload-too-large"))
        #expect(byInput["unreadable.json"]?["reason"] == .string("unreadable-input"))
        #expect(Fixtures.files(in: out + "/payloads").count == byInput.count, "one output per input")
        #expect(leftovers(out).isEmpty)
        // The summary agrees, and so does the JUnit report.
        let summary = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: out + "/summary.json"))))
        #expect(summary["recorded"] == .number(String(byInput.count)))
        #expect(summary["verdicts"]?["rejected"] == .number("4"))
        // A wall time to the millisecond, not Double's noise.
        if case .number(let elapsed)? = summary["elapsed_seconds"] {
            #expect((elapsed.split(separator: ".").last?.count ?? 0) <= 3 || !elapsed.contains("."), "\(elapsed)")
        } else {
            Issue.record("summary.json has no elapsed_seconds")
        }
        let junit = try JUnitCounts(path: out + "/junit.xml")
        // One case per payload, then one per threshold of the gate (the three defaults here).
        #expect(junit.testCases == byInput.count + 3)
        guard case .array(let thresholds)? = summary["thresholds"] else {
            Issue.record("summary.json has no thresholds")
            return
        }
        let gateFailures = thresholds.filter { $0["passed"] == .bool(false) }.count
        #expect(summary["passed"] == .bool(gateFailures == 0))
        #expect(run.status == (gateFailures == 0 ? 0 : 1), "the exit status is the gate's")
        // Inputs that cannot be read or parsed are errors; every other payload that would not show a failure.
        #expect(junit.errors == 3, "broken.json, array.json, unreadable.json")
        #expect(
            junit.failures + junit.errors
                == byInput.values.filter {
                    $0["verdict"] != .string("attached") && $0["verdict"] != .string("no-attachment")
                        || $0["content_extension"]?["outcome"] == .string("would-crash")
                        || $0["content_extension"]?["outcome"] == .string("configuration-error")
                }.count + gateFailures)
        let payloadCases = Array(junit.caseNames.prefix(byInput.count))
        #expect(payloadCases == payloadCases.sorted(), "cases in input (sorted) order")
        #expect(Array(junit.caseNames.suffix(3)) == ["display>=100%", "would_crash==0", "configuration_error==0"])
        #expect(run.stderr.contains("Display rate:"))
    }

    /// The samples' display rate in percent, from Samples/expected.tsv: attached of those that asked.
    static var displayRate: Int {
        let requested = SamplePayloads.expectations.filter { $0.verdict != "no-attachment" }
        return Int(Double(requested.filter { $0.verdict == "attached" }.count) * 100 / Double(requested.count))
    }

    @Test func passesWhenTheShareMeetsFailUnder() async throws {
        defer { cleanUp() }
        let out = folder + "/out"
        let run = try await RichPushBinary.run(
            ["batch", SamplePayloads.folder, "--out", out, "--fail-under", "\(Self.displayRate - 1)", "--no-progress"]
                + options + ["--sdk", "auto"])
        #expect(run.status == 0, "\(run.stderr)")
        let strict = try await RichPushBinary.run(
            ["batch", SamplePayloads.folder, "--out", out, "--fail-under", "\(Self.displayRate + 1)", "--no-progress"]
                + options + ["--sdk", "auto"])
        #expect(strict.status == 1)
        #expect(strict.stderr.contains("\(SamplePayloads.expectations.count) done earlier"))
    }

    /// Another SDK's payloads checked without `--sdk`: Braze's extension reads no media from them, and the
    /// sender asked for media, so they count as not shown and the gate fails, loudly, naming `--sdk`.
    @Test func anotherSDKsPayloadsFailTheGateWithoutSDK() async throws {
        defer { cleanUp() }
        let input = folder + "/onesignal"
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        for name in ["onesignal-mime-named.json", "onesignal-two-attachments.json", "image-jpg.json"] {
            try FileManager.default.copyItem(atPath: SamplePayloads.folder + "/" + name, toPath: input + "/" + name)
        }
        let run = try await RichPushBinary.run(
            ["batch", input, "--out", folder + "/out", "--no-progress"] + options)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("Other SDKs: 2 payload(s) carry another SDK's media keys"), "\(run.stderr)")
        #expect(run.stderr.contains("1 of 3 payloads that asked for an attachment"), "\(run.stderr)")
        let summary = try JSONValue.parse(
            Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/out/summary.json"))))
        #expect(summary["other_sdk_payloads"] == .number("2") && summary["requested"] == .number("3"))
        #expect(
            OutputSchemas.violations(
                of: String(
                    decoding: try Data(contentsOf: URL(fileURLWithPath: folder + "/out/summary.json")), as: UTF8.self),
                against: "batch-summary") == [])
        // With the SDKs' own keys read, the same payloads pass.
        let auto = try await RichPushBinary.run(
            ["batch", input, "--out", folder + "/auto", "--no-progress", "--sdk", "auto"] + options)
        #expect(auto.status == 0, "\(auto.stderr)")
        #expect(!auto.stderr.contains("Other SDKs"))
    }

    @Test func resumesAfterAnInterruptionWithNothingLostOrDoubled() async throws {
        defer { cleanUp() }
        let input = folder + "/in"
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        for index in 0..<12 {
            let text =
                #"{"aps":{"alert":"n","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg?delay=2000&n=\#(index)","type":"jpg"}}}"#
            _ = FileManager.default.createFile(atPath: input + "/p\(index).json", contents: Data(text.utf8))
        }
        let out = folder + "/out"
        let arguments = ["batch", input, "--out", out, "--concurrency", "2", "--no-progress"] + options
        let running = try RichPushBinary.start(arguments)
        // Generous (a loaded machine has taken over 12 s to start the binary): once two are recorded,
        // the others still take 10 s at least (2 s server delays, two at a time).
        let deadline = ContinuousClock.now + .seconds(60)
        func journalLines() -> Int {
            ((try? String(contentsOfFile: out + "/.richpush/journal.ndjson", encoding: .utf8)) ?? "")
                .split(separator: "\n").count
        }
        while journalLines() < 2 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        running.signal(SIGINT)
        let interrupted = await running.wait()
        #expect(interrupted.status == 130, "\(interrupted.stderr)")
        #expect(interrupted.stderr.contains("Run the same command to resume"))
        let partial = try records(out)
        #expect(partial.count >= 2 && partial.count < 12)
        #expect(leftovers(out).isEmpty, "no partial file after an interruption")
        #expect(Fixtures.files(in: out + "/payloads").count == partial.count)

        let resumed = try await RichPushBinary.run(arguments)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("\(partial.count) done earlier"))
        #expect(
            resumed.stderr.contains("RESUMED: \(partial.count) of 12 result(s) come from an earlier run"),
            "a resume is said out loud: \(resumed.stderr)")
        let all = try records(out)
        #expect(all.count == 12)
        #expect(Fixtures.files(in: out + "/payloads").count == 12)
        #expect(leftovers(out).isEmpty)

        let reference = try await RichPushBinary.run(
            ["batch", input, "--out", folder + "/ref", "--no-progress"] + options)
        #expect(reference.status == 0)
        let uninterrupted = try records(folder + "/ref")
        #expect(Set(all.keys) == Set(uninterrupted.keys))
        for (input, record) in all {
            #expect(record["verdict"] == uninterrupted[input]?["verdict"])
            #expect(record["sha256"] == uninterrupted[input]?["sha256"])
        }
    }

    func writeSlowPayloads(_ count: Int, delay: Int, into input: String) throws {
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        for index in 0..<count {
            let text =
                #"{"aps":{"alert":"n","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg?delay=\#(delay)&n=\#(index)","type":"jpg"}}}"#
            _ = FileManager.default.createFile(atPath: input + "/p\(index).json", contents: Data(text.utf8))
        }
    }

    @Test func refusesASecondBatchOnAFolderInUse() async throws {
        defer { cleanUp() }
        let input = folder + "/in"
        try writeSlowPayloads(30, delay: 2000, into: input)
        let out = folder + "/out"
        let arguments = ["batch", input, "--out", out, "--no-progress"] + options
        // One payload at a time: the first run lasts 60 s at least unless interrupted, longer than a
        // loaded machine takes to start it and then the second.
        let first = try RichPushBinary.start(arguments + ["--concurrency", "1"])
        let deadline = ContinuousClock.now + .seconds(60)
        while ((try? String(contentsOfFile: out + "/.richpush/lock", encoding: .utf8)) ?? "").isEmpty
            && ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        let second = try await RichPushBinary.run(arguments)
        first.signal(SIGINT)
        let firstRun = await first.wait()
        #expect(second.status == 74, "\(second.stderr)")
        #expect(second.stderr.contains("in use by another richpush batch") && second.stderr.contains("/out"))
        #expect(second.stderr.contains("pid "))
        #expect(firstRun.status == 130 || firstRun.status == 0, "\(firstRun.stderr)")
        #expect(leftovers(out).isEmpty)
        // Once the first has ended, the folder is free again.
        let third = try await RichPushBinary.run(arguments)
        #expect(third.status != 74 && !third.stderr.contains("in use"), "\(third.stderr)")
    }

    @Test func repeatedlyKilledForcedRunsKeepTheJournalBounded() async throws {
        defer { cleanUp() }
        let input = folder + "/in"
        try writeSlowPayloads(12, delay: 300, into: input)
        let out = folder + "/out"
        let arguments = ["batch", input, "--out", out, "--concurrency", "4", "--no-progress"] + options
        #expect(try await RichPushBinary.run(arguments).status == 0)
        func outputsWritten(since start: Date) -> Int {
            Fixtures.files(in: out + "/payloads").filter {
                let attributes = try? FileManager.default.attributesOfItem(atPath: out + "/payloads/" + $0)
                return (attributes?[.modificationDate] as? Date).map { $0 >= start } ?? false
            }.count
        }
        for _ in 0..<5 {
            let start = Date()
            let running = try RichPushBinary.start(arguments + ["--force"])
            let deadline = ContinuousClock.now + .seconds(20)
            while outputsWritten(since: start) < 4 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            running.signal(SIGKILL)
            _ = await running.wait()
        }
        let lines = try String(contentsOfFile: out + "/.richpush/journal.ndjson", encoding: .utf8)
            .split(separator: "\n").count
        #expect(lines <= 12, "at most one record per payload (\(lines) lines)")
        let resumed = try await RichPushBinary.run(arguments)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(try records(out).count == 12)
    }

    @Test func refusesUnusableInputAndUsage() async throws {
        defer { cleanUp() }
        #expect(try await RichPushBinary.run(["batch", folder + "/missing", "--out", folder + "/o"]).status == 65)
        try FileManager.default.createDirectory(atPath: folder + "/empty", withIntermediateDirectories: true)
        #expect(try await RichPushBinary.run(["batch", folder + "/empty", "--out", folder + "/o"]).status == 65)
        #expect(try await RichPushBinary.run(["batch", SamplePayloads.folder]).status == 64, "--out is required")
        _ = FileManager.default.createFile(atPath: folder + "/file", contents: Data())
        #expect(try await RichPushBinary.run(["batch", SamplePayloads.folder, "--out", folder + "/file"]).status == 74)
    }
}

/// Counts test cases and failures in a JUnit XML file with Foundation's XML parser.
final class JUnitCounts: NSObject, XMLParserDelegate {
    private(set) var testCases = 0
    private(set) var failures = 0
    private(set) var errors = 0
    /// The cases' names, in document order.
    private(set) var caseNames: [String] = []

    init(path: String) throws {
        super.init()
        let parser = try #require(XMLParser(contentsOf: URL(fileURLWithPath: path)))
        parser.delegate = self
        #expect(parser.parse(), "the JUnit report is well-formed XML")
    }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        if elementName == "testcase" {
            testCases += 1
            caseNames.append(attributes["name"] ?? "")
        }
        if elementName == "failure" { failures += 1 }
        if elementName == "error" { errors += 1 }
    }
}
