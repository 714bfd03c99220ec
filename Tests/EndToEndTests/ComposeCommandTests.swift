import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// `richpush compose`, `process --braze-request` and `batch --braze-requests` run as a user would.
@Suite struct ComposeCommandTests {
    static let requests = Fixtures.root + "/Samples/requests"

    @Test func composesASampleRequestToCompactJSONOnStdoutAndHeadersOnStderr() async throws {
        let run = try await RichPushBinary.run(["compose", Self.requests + "/movie-fragment.json"])
        #expect(run.status == 0, "\(run.stderr)")
        let expected = try String(contentsOfFile: Self.requests + "/expected/movie-fragment.json", encoding: .utf8)
        #expect(run.stdout == expected)
        #expect(!run.stdout.dropLast().contains("\n") && !run.stdout.contains(": "))
        #expect(
            run.stderr.contains(
                "apns-push-type: alert, apns-priority: 5, apns-expiration: 1798135200, apns-collapse-id: highlights"),
            "\(run.stderr)")
    }

    @Test func readsStdinAndWritesAnEnvelope() async throws {
        let request = #"{"broadcast":true,"messages":{"apple_push":{"alert":"Hi","custom_uri":"myapp://x"}}}"#
        let run = try await RichPushBinary.run(["compose", "--envelope"], stdin: Data(request.utf8))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(OutputSchemas.violations(of: run.stdout, against: "compose-envelope") == [])
        let line = try JSONValue.parse(Array(run.stdout.utf8))
        #expect(
            line["payload"]?.text
                == #"{"aps":{"alert":"Hi"},"ab":{"c":null},"ab_uri":"myapp://x","ab_use_webview":true}"#)
        #expect(line["payload_bytes"] == .number(String(line["payload"]?.utf8.count ?? 0)))
        #expect(run.stderr.isEmpty, "\(run.stderr)")
    }

    @Test(arguments: [
        ("refused-extra-ab.json", "400 \"Invalid Extra Push Payload\""),
        ("refused-too-long.json", "400 \"Apple Push Length Exceeded\": JSON payload is more than 1,912 bytes"),
        ("refused-no-recipients.json", "400 \"No Recipients\""),
        ("refused-no-message.json", "400 \"No message to send\""),
        ("refused-broadcast-with-recipients.json", "400 \"Bad Request\": the request sets broadcast: true"),
    ])
    func aRefusedRequestIsExit65WithBrazesWords(name: String, words: String) async throws {
        let run = try await RichPushBinary.run(["compose", Self.requests + "/" + name])
        #expect(run.status == 65)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("refused: Braze would answer " + words), "\(run.stderr)")
        #expect(run.stderr.contains("Hint: "))
        let enveloped = try await RichPushBinary.run(["compose", "--envelope", Self.requests + "/" + name])
        #expect(enveloped.status == 65)
        #expect(OutputSchemas.violations(of: enveloped.stdout, against: "compose-envelope") == [])
        #expect(try JSONValue.parse(Array(enveloped.stdout.utf8))["refusal"]?["status"] == .number("400"))
    }

    /// One payload per user, each rendered; what is not rendered is named.
    @Test func rendersLiquidPerUser() async throws {
        let run = try await RichPushBinary.run([
            "compose", "--envelope", "--user", Self.requests + "/users.ndjson", Self.requests + "/liquid-welcome.json",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map { try? JSONValue.parse(Array($0.utf8)) }
        #expect(lines.count == 2)
        #expect(lines[0]?["user"] == .number("1"))
        #expect(lines[0]?["payload"]?["aps"]?["alert"]?["title"] == .string("Welcome back, Ada"))
        #expect(lines[1]?["payload"]?["aps"]?["alert"]?["title"] == .string("Welcome back, friend"))
        #expect(lines[1]?["payload"]?["aps"]?["alert"]?["body"]?.text.contains("Your silver points") == true)
        #expect(run.stderr.contains("warning [liquid-left-as-written]"), "\(run.stderr)")
        #expect(run.stderr.contains("{% if ${city} %}"))
    }

    @Test func explainListsTheInferredRules() async throws {
        let all = try await RichPushBinary.run(["compose", "--explain"])
        #expect(all.status == 0)
        for rule in ComposeRule.all where rule.dialect == .braze {
            #expect(all.stdout.contains(rule.id + " "), "\(rule.id)")
        }
        #expect(all.stdout.contains("custom-uri") && all.stdout.contains("inferred"))
        let used = try await RichPushBinary.run(["compose", "--explain", Self.requests + "/buttons-yes-no.json"])
        #expect(used.stdout.contains("buttons ") && used.stdout.contains("category "), "\(used.stdout)")
        #expect(!used.stdout.contains("asset-url"))
        let oneSignal = try await RichPushBinary.run(["compose", "--explain", "--sdk", "onesignal"])
        #expect(oneSignal.stdout.contains("onesignal-attachments") && !oneSignal.stdout.contains("custom-uri"))
    }

    @Test func anUnknownSDKIsAUsageError() async throws {
        let run = try await RichPushBinary.run(["compose", "--sdk", "onesignl", Self.requests + "/rich-image.json"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("did you mean 'onesignal'?"), "\(run.stderr)")
    }
}

/// The pipeline reads requests directly: compose, then the extension, against the embedded server.
@Suite struct BrazeRequestPipelineTests {
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

    @Test func processRunsTheComposedPayloadAndKeepsTheRequest() async throws {
        defer { cleanUp() }
        let request = ComposeCommandTests.requests + "/rich-image.json"
        let run = try await RichPushBinary.run(
            ["process", "--out", folder + "/out", "--report", folder + "/report.json", "--braze-request", request]
                + options, directory: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.hasPrefix("richpush: attached"), "\(run.stderr)")
        let output = try JSONValue.parse(Array(run.stdout.utf8))
        #expect(output["deep_link"] == .string("myapp://sale/shoes"))
        #expect(output["score"] == .number("1.10"))
        let composed = try #require(output["richpush"]?["composed"])
        #expect(composed["request"] == .string(request))
        let expected = try String(
            contentsOfFile: ComposeCommandTests.requests + "/expected/rich-image.json", encoding: .utf8)
        #expect(composed["payload"] == .string(String(expected.dropLast())))
        #expect(OutputSchemas.violations(of: output["richpush"]?.text ?? "", against: "outcome") == [])
        let report = try String(contentsOfFile: folder + "/report.json", encoding: .utf8)
        #expect(OutputSchemas.violations(of: report, against: "outcome") == [])
        #expect(report.contains("\"request\" : \"\(request)\""), "\(report)")
    }

    /// `compose --sdk X` writes what X's server delivers, so `process --sdk auto` runs the payload as X.
    @Test(arguments: [
        ("braze", "rich-image.json"), ("onesignal", "onesignal-attachments.json"), ("airship", "airship-media.json"),
    ])
    func processUnderAutoRunsAComposedPayloadAsItsSDK(sdk: String, request: String) async throws {
        defer { cleanUp() }
        let composed = try await RichPushBinary.run(
            ["compose", "--sdk", sdk, ComposeCommandTests.requests + "/" + request])
        #expect(composed.status == 0, "\(composed.stderr)")
        let run = try await RichPushBinary.run(
            ["process", "--sdk", "auto", "--out", folder + "/out"] + options, stdin: Data(composed.stdout.utf8),
            directory: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let outcome = try #require(try JSONValue.parse(Array(run.stdout.utf8))["richpush"])
        #expect(outcome["sdk"] == .string(sdk), "\(outcome.text)")
        #expect(outcome["verdict"] == .string("attached"), "\(outcome.text)")
    }

    /// A background push composed from content-available decides invocation: the extension never runs,
    /// whatever mutable-content says.
    @Test func theComposedPushTypeDecidesInvocation() async throws {
        defer { cleanUp() }
        let request = folder + "/silent.json"
        try
            #"{"broadcast":true,"messages":{"apple_push":{"content-available":true,"asset_url":"https://cdn.example.com/hero.jpg","asset_file_type":"jpg"}}}"#
            .write(toFile: request, atomically: true, encoding: .utf8)
        let run = try await RichPushBinary.run(
            ["process", "--out", folder + "/out", "--braze-request", request] + options, directory: folder)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.hasPrefix("richpush: not-invoked"), "\(run.stderr)")
        #expect(run.stderr.contains("apns-push-type: background"), "\(run.stderr)")
        let conflict = try await RichPushBinary.run(
            ["process", "--braze-request", request, "--push-type", "voip"] + options, directory: folder)
        #expect(conflict.status == 64, "\(conflict.stderr)")
    }

    /// A refused request is the verdict rejected (request-refused) with Braze's words, in the report too.
    @Test func processRefusesWhatBrazeRefuses() async throws {
        defer { cleanUp() }
        let request = ComposeCommandTests.requests + "/refused-asset-webp.json"
        let run = try await RichPushBinary.run(
            ["process", "--out", folder + "/out", "--report", folder + "/report.json", "--braze-request", request]
                + options, directory: folder)
        #expect(run.status == 65)
        #expect(run.stdout.isEmpty)
        #expect(
            run.stderr.hasPrefix("richpush: rejected [request-refused]: Braze would answer 400 \"Bad Request\""),
            "\(run.stderr)")
        #expect(run.stderr.contains("Hint: Convert the asset"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/out"))
        let report = try String(contentsOfFile: folder + "/report.json", encoding: .utf8)
        #expect(OutputSchemas.violations(of: report, against: "outcome") == [])
        #expect(report.contains("\"reason\" : \"request-refused\""), "\(report)")
    }

    @Test func batchComposesEveryRequestOfAFolderAndOfAnNDJSONFile() async throws {
        defer { cleanUp() }
        let input = folder + "/requests"
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        for name in ["rich-image.json", "movie-fragment.json", "background-refresh.json", "refused-extra-ab.json"] {
            try FileManager.default.copyItem(
                atPath: ComposeCommandTests.requests + "/" + name, toPath: input + "/" + name)
        }
        let run = try await RichPushBinary.run(
            ["batch", "--braze-requests", "--out", folder + "/out", "--no-progress", input] + options,
            directory: folder)
        // The refused request is not shown: the default gate fails.
        #expect(run.status == 1, "\(run.stderr)")
        let records = try String(contentsOfFile: folder + "/out/results.ndjson", encoding: .utf8)
            .split(separator: "\n").map { try JSONValue.parse(Array($0.utf8)) }
        func record(_ name: String) -> JSONValue? { records.first { $0["input"] == .string(name) } }
        #expect(records.count == 4)
        #expect(record("rich-image.json")?["verdict"] == .string("attached"))
        #expect(record("movie-fragment.json")?["verdict"] == .string("attached"))
        #expect(record("background-refresh.json")?["verdict"] == .string("no-attachment"))
        #expect(record("background-refresh.json")?["composed"]?["headers"]?["apns-push-type"] == .string("background"))
        #expect(record("rich-image.json")?["composed"]?["request"] == .string("rich-image.json"))
        #expect(record("refused-extra-ab.json")?["reason"] == .string("request-refused"))
        #expect(record("refused-extra-ab.json")?["message"]?.text.contains("Invalid Extra Push Payload") == true)
        for line in records { #expect(OutputSchemas.violations(of: line.text, against: "batch-record") == []) }
        let summary = try String(contentsOfFile: folder + "/out/summary.json", encoding: .utf8)
        #expect(OutputSchemas.violations(of: summary, against: "batch-summary") == [])

        // A resume must read the inputs the same way: without the flag, the folder's results are refused.
        let resumed = try await RichPushBinary.run(
            ["batch", "--out", folder + "/out", "--no-progress", input] + options, directory: folder)
        #expect(resumed.status == 64, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("--braze-requests was on, now (not set)"), "\(resumed.stderr)")

        // NDJSON: one request per line.
        let ndjson = folder + "/requests.ndjson"
        try
            (#"{"broadcast":true,"messages":{"apple_push":{"alert":"a","asset_url":"https://cdn.example.com/hero.png","asset_file_type":"png"}}}"#
            + "\n" + #"{"alert":"b","extra":{"aps":1}}"# + "\n").write(
                toFile: ndjson, atomically: true, encoding: .utf8)
        let lines = try await RichPushBinary.run(
            ["batch", "--braze-requests", "--out", folder + "/out2", "--no-progress", ndjson] + options,
            directory: folder)
        #expect(lines.status == 1, "\(lines.stderr)")
        let second = try String(contentsOfFile: folder + "/out2/results.ndjson", encoding: .utf8)
        #expect(second.contains("\"verdict\":\"attached\""), "\(second)")
        #expect(second.contains("\"reason\":\"request-refused\""))
    }
}
