import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// `--sdk` through the binary on process, batch and bench, and `richpush sdk list`.
@Suite struct SDKCommandTests {
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

    /// A budget a loaded machine cannot exhaust: nothing here is about time.
    var options: [String] {
        ["--budget", "60"] + Fixtures.sampleHost(server)
    }

    @Test func listsEveryDialectAsTextAndJSON() async throws {
        defer { cleanUp() }
        let text = try await RichPushBinary.run(["sdk", "list"])
        #expect(text.status == 0, "\(text.stderr)")
        for dialect in Dialect.all { #expect(text.stdout.contains("\(dialect.name) (\(dialect.title))")) }
        #expect(text.stdout.contains("--sdk auto order: airship, customerio"))
        let json = try await RichPushBinary.run(["sdk", "list", "--json"])
        let lines = try json.stdout.split(separator: "\n").map { try JSONValue.parse(Array($0.utf8)) }
        #expect(
            lines.compactMap { if case .string(let name)? = $0["name"] { name } else { nil } }
                == Dialect.all.map(\.name))
        #expect(lines[1]["case_sensitive"] == .bool(true), "OneSignal matches extensions case-sensitively")
        #expect(try await RichPushBinary.run(["sdk", "list", "extra"]).status == 64)
    }

    @Test func processRunsOneSignalsSeveralAttachmentsAndSaysWhatTheUserSees() async throws {
        defer { cleanUp() }
        let input = try SamplePayloads.bytes("onesignal-two-attachments.json")
        let run = try await RichPushBinary.run(
            ["process", "--sdk", "onesignal", "--out", folder + "/out"] + options, stdin: Data(input))
        #expect(run.status == 0, "\(run.stderr)")
        let outcome = try #require(try JSONValue.parse(Array(run.stdout.utf8))["richpush"])
        #expect(OutputSchemas.violations(of: outcome.text, against: "outcome") == [])
        #expect(outcome["sdk"] == .string("onesignal"))
        guard case .array(let items)? = outcome["attachments"] else {
            Issue.record("no attachments: \(outcome.text)")
            return
        }
        #expect(items.count == 2)
        #expect(outcome["delivered"]?["content"] == .string("composed"))
        #expect(outcome["delivered"]?["attachments"] == .number("2"))
        #expect(run.stderr.contains("onesignal: OneSignal attached 2 of 2"), "\(run.stderr)")
        // The same payload read as Braze's asks for nothing.
        let braze = try await RichPushBinary.run(["process", "--out", folder + "/out"] + options, stdin: Data(input))
        #expect(braze.status == 0)
        #expect(
            try JSONValue.parse(Array(braze.stdout.utf8))["richpush"]?["reason"] == .string("no-attachment-requested"))
    }

    @Test func batchUnderAutoNamesEachRecordsSDK() async throws {
        defer { cleanUp() }
        let input = folder + "/in"
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        for name in ["firebase-image.json", "klaviyo-video.json", "image-jpg.json"] {
            try FileManager.default.copyItem(atPath: SamplePayloads.folder + "/" + name, toPath: input + "/" + name)
        }
        let out = folder + "/out"
        let run = try await RichPushBinary.run(
            ["batch", input, "--out", out, "--no-progress", "--sdk", "auto"] + options)
        #expect(run.status == 0, "\(run.stderr)")
        let records = try String(contentsOfFile: out + "/results.ndjson", encoding: .utf8).split(separator: "\n")
            .map { try JSONValue.parse(Array($0.utf8)) }
        var sdks: [String: String] = [:]
        for record in records {
            #expect(OutputSchemas.violations(of: record.text, against: "batch-record") == [], "\(record.text)")
            if case .string(let name)? = record["input"], case .string(let sdk)? = record["sdk"] { sdks[name] = sdk }
        }
        #expect(
            sdks == ["firebase-image.json": "firebase", "klaviyo-video.json": "klaviyo", "image-jpg.json": "braze"])
    }

    @Test func benchRunsADialect() async throws {
        defer { cleanUp() }
        let payload = folder + "/p.json"
        try Data(
            #"{"aps":{"alert":"a","mutable-content":1},"fcm_options":{"image":"https://cdn.example.com/hero.png"}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: payload))
        let run = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "--payload", payload, "--sdk", "firebase", "--devices", "8",
                "--no-progress", "--no-preflight",
            ], directory: Fixtures.root)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Display rate: 100.0% of 8 devices"), "\(run.stdout)")
        let braze = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "--payload", payload, "--devices", "4", "--no-progress",
                "--no-preflight",
            ],
            directory: Fixtures.root)
        #expect(braze.status == 65, "Braze reads no fcm_options: \(braze.stderr)")
    }
}

/// A bench reports the SDK's own calls beside the CDN's.
@Suite struct SDKBenchTests {
    @Test func benchReportsCustomerIOsDeliveryMetricBesideTheDownload() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let payload = folder + "/p.json"
        try Data(
            #"{"aps":{"alert":"a","mutable-content":1},"CIO-Delivery-ID":"d","CIO-Delivery-Token":"t","CIO":{"push":{"image":"https://cdn.example.com/hero.jpg"}}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: payload))
        let run = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "--payload", payload, "--sdk", "auto", "--sdk-latency", "20",
                "--devices", "6", "--no-progress", "--no-preflight", "--json", folder + "/report.json",
            ], directory: Fixtures.root)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout.contains("SDK call delivery metric (modelled): 6 sent, 0 without a 2xx answer"), "\(run.stdout)")
        let text = try String(contentsOfFile: folder + "/report.json", encoding: .utf8)
        let problems = JSONSchemaCheck.violations(
            of: try JSONSerialization.jsonObject(with: Data(text.utf8)), against: try BenchCommandTests.schema())
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(text.contains("sdk_call:delivery metric (modelled)"))
    }

    @Test func benchSendsCleverTapsNotificationViewedToTheEndpoint() async throws {
        let folder = try Fixtures.temporaryFolder()
        let endpoint = try Fixtures.startServer()
        defer {
            endpoint.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }
        let payload = folder + "/p.json"
        try Data(
            #"{"aps":{"alert":"a","mutable-content":1},"wzrk_pn":true,"wzrk_id":"1_2","ct_mediaUrl":"https://cdn.example.com/hero.jpg","ct_mediaType":"image"}"#
                .utf8
        ).write(to: URL(fileURLWithPath: payload))
        let arguments = [
            "bench", "--serve", Fixtures.assets, "--payload", payload, "--sdk", "auto", "--sdk-endpoint",
            "http://127.0.0.1:\(endpoint.httpPort)", "--devices", "6", "--no-progress", "--no-preflight",
        ]
        let off = try await RichPushBinary.run(arguments, directory: Fixtures.root)
        #expect(off.status == 0, "\(off.stderr)")
        #expect(!off.stdout.contains("Notification Viewed"), "the app must turn it on: \(off.stdout)")
        let on = try await RichPushBinary.run(arguments + ["--sdk-receipts"], directory: Fixtures.root)
        #expect(on.status == 0, "\(on.stderr)")
        #expect(
            on.stdout.contains("SDK call Notification Viewed: 6 sent, 0 without a 2xx answer"), "\(on.stdout)")
    }
}
