import Foundation
import RichPush
import RichPushRuns
import TestSupport
import Testing

/// `--ios` and `--linked-sdk` through the binary: a URL with a space in its path shows on iOS 17 and
/// 18, and is the plain notification on iOS 16 and in an extension linked against the 16 SDK.
@Suite struct IOSVersionTests {
    @Test func aSpaceInThePathShowsOnlyWhereURLStringEncodesIt() async throws {
        let folder = try Fixtures.temporaryFolder("richpush-ios")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/assets", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.assets + "/hero.jpg", toPath: folder + "/assets/summer sale.jpg")
        let server = try Fixtures.startServer(root: folder + "/assets")
        defer { server.stop() }
        let payload = folder + "/p.json"
        try Data(
            #"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/summer sale.jpg","type":"jpg"}}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: payload))
        func run(_ options: [String]) async throws -> (JSONValue?, BinaryRun) {
            let run = try await RichPushBinary.run(
                ["process", payload, "--out", folder + "/out"] + options + Fixtures.sampleHost(server))
            return (try? JSONValue.parse(Array(run.stdout.utf8))["richpush"], run)
        }
        for options in [[], ["--ios", "17"], ["--ios", "18.0"]] {
            let (outcome, run) = try await run(options)
            #expect(outcome?["verdict"] == .string("attached"), "\(options): \(run.stderr)")
            #expect(outcome.map { $0.text.contains("url-needs-ios-17") } == true, "\(options)")
        }
        for options in [["--ios", "16"], ["--ios", "18", "--linked-sdk", "16"], ["--ios", "15.8"]] {
            let (outcome, run) = try await run(options)
            #expect(outcome?["verdict"] == .string("fallback"), "\(options): \(run.stderr)")
            #expect(outcome?["reason"] == .string("invalid-url"), "\(options)")
            #expect(run.stderr.contains("RFC 1738/1808"), "\(options): \(run.stderr)")
        }
        // --ios all: one JSON line per version, the worst exit status.
        let every = try await RichPushBinary.run(
            ["process", payload, "--ios", "all", "--out", folder + "/out"] + Fixtures.sampleHost(server))
        #expect(every.status == 1, "\(every.stderr)")
        let rows = try every.stdout.split(separator: "\n").map { try JSONValue.parse(Array($0.utf8)) }
        func text(_ value: JSONValue?) -> String {
            if case .string(let string)? = value { return string }
            return "?"
        }
        #expect(
            rows.map { "\(text($0["ios"])) \(text($0["linked_sdk"])) \(text($0["verdict"]))" }
                == [
                    "15.6 15.6 fallback", "16.6 16.6 fallback", "17.5 17.5 attached", "18.0 18.0 attached",
                    "18.0 16.6 fallback",
                ], "\(every.stdout)")
        #expect(every.stderr.contains("iOS 18.0 (extension linked against the 16.6 SDK)"), "\(every.stderr)")
        let batch = try await RichPushBinary.run(["batch", payload, "--ios", "all", "--out", folder + "/b"])
        #expect(batch.status == 64, "\(batch.stderr)")
        let refused = try await RichPushBinary.run(["process", payload, "--ios", "14"])
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("15, 16, 17, 18"), "\(refused.stderr)")
    }

    /// The User-Agent names the CFNetwork and Darwin of the phone's release.
    @Test func theUserAgentFollowsTheVersion() async throws {
        let server = try Fixtures.startServer()
        let folder = try Fixtures.temporaryFolder("richpush-ios-agent")
        defer {
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }
        let run = try await RichPushBinary.run(
            ["process", Fixtures.root + "/Samples/payloads/image-jpg.json", "-v", "--ios", "16", "--out", folder]
                + Fixtures.sampleHost(server))
        #expect(
            run.stderr.contains("User-Agent: NotificationService/1 CFNetwork/1410.0.3 Darwin/22.6.0"), "\(run.stderr)")
    }
}

extension IOSVersionTests {
    /// The issue's case: a URL with a space in its path, three devices in four on iOS 17, one on 16.
    @Test func anAudienceGivesTheDisplayRatePerVersion() async throws {
        let folder = try Fixtures.temporaryFolder("richpush-audience")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/assets", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.assets + "/hero.jpg", toPath: folder + "/assets/summer sale.jpg")
        let payload = folder + "/p.json"
        try Data(
            #"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/summer sale.jpg","type":"jpg"}}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: payload))
        let arguments = [
            "bench", "--serve", folder + "/assets", "--payload", payload, "--devices", "40", "--no-progress",
        ]
        let run = try await RichPushBinary.run(
            arguments + ["--ios-mix", "17=75,16=25", "--json", folder + "/r.json", "--html", folder + "/r.html"])
        #expect(run.status == 0, "\(run.stderr)")
        let text = try String(contentsOfFile: folder + "/r.json", encoding: .utf8)
        let report = try BenchReport.read(Data(text.utf8))
        #expect(report.config.iosMix == "17.0=75,16.0=25")
        #expect(report.audience?["17.0"]?.devices == 30 && report.audience?["17.0"]?.displayRate == 1)
        #expect(report.audience?["16.0"]?.devices == 10 && report.audience?["16.0"]?.displayRate == 0)
        #expect(report.displayRate == 0.75)
        let problems = JSONSchemaCheck.violations(
            of: try JSONSerialization.jsonObject(with: Data(text.utf8)), against: try BenchCommandTests.schema())
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(run.stdout.contains("PHONE") && run.stdout.contains("iOS 16.0"), "\(run.stdout)")
        let html = try String(contentsOfFile: folder + "/r.html", encoding: .utf8)
        #expect(html.contains("By iOS version"))
        // One phone per device is drawn: --ios beside it is a usage error, as is a mix that is not one.
        for extra in [["--ios-mix", "17=75,16=25", "--ios", "16"], ["--ios-mix", "17=75"]] {
            let refused = try await RichPushBinary.run(arguments + extra)
            #expect(refused.status == 64, "\(extra): \(refused.stderr)")
        }
    }
}

extension IOSVersionTests {
    /// A batch draws each payload a phone, as a campaign's push reaches one phone: the summary, the
    /// records and the JUnit file say which, and the display rate is the audience's.
    @Test func aBatchJudgesEachPayloadOnItsDrawnPhone() async throws {
        let folder = try Fixtures.temporaryFolder("richpush-batch-audience")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in ["assets", "in"] {
            try FileManager.default.createDirectory(atPath: folder + "/" + name, withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(
            atPath: Fixtures.assets + "/hero.jpg", toPath: folder + "/assets/summer sale.jpg")
        for index in 1...8 {
            try Data(
                #"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/summer sale.jpg?n=\#(index)","type":"jpg"}}}"#
                    .utf8
            ).write(to: URL(fileURLWithPath: folder + "/in/p\(index).json"))
        }
        let server = try Fixtures.startServer(root: folder + "/assets")
        defer { server.stop() }
        let run = try await RichPushBinary.run(
            [
                "batch", folder + "/in", "--out", folder + "/out", "--ios-mix", "17=75,16=25", "--junit",
                folder + "/junit.xml", "--no-progress", "--fail-under", "75",
            ] + Fixtures.sampleHost(server))
        #expect(run.status == 0, "\(run.stderr)")
        let summaryText = try String(contentsOfFile: folder + "/out/summary.json", encoding: .utf8)
        let summary = try JSONValue.parse(Array(summaryText.utf8))
        #expect(summary["audience"]?["17.0"]?["payloads"] == .number("6"), "\(summaryText)")
        #expect(summary["audience"]?["17.0"]?["display_rate"] == .number("1"))
        #expect(summary["audience"]?["16.0"]?["attached"] == .number("0"))
        #expect(summary["display_rate"] == .number("0.75"))
        let problems = OutputSchemas.violations(of: summaryText, against: "batch-summary")
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        let records = try String(contentsOfFile: folder + "/out/results.ndjson", encoding: .utf8)
        for line in records.split(separator: "\n") {
            let violations = OutputSchemas.violations(of: String(line), against: "batch-record")
            #expect(violations.isEmpty, "\(violations.prefix(3))")
        }
        #expect(records.components(separatedBy: #""phone":"16.0""#).count - 1 == 2)
        let junit = try String(contentsOfFile: folder + "/junit.xml", encoding: .utf8)
        #expect(junit.components(separatedBy: "(iOS 16.0)").count - 1 == 2, "\(junit)")
        #expect(run.stderr.contains("PHONE"), "\(run.stderr)")
    }
}
