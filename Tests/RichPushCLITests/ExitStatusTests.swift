import Foundation
import POSIXKit
import TestSupport
import Testing

@testable import RichPush
@testable import RichPushCLI
@testable import RichPushServices

/// The one exit mapping: every library error code maps to one status of the table, the same in
/// every command.
@Suite struct ExitStatusTests {
    @Test func everyConfigurationCodeHasItsStatus() {
        let expected: [ConfigurationError.Code: ExitCode] = [
            .invalidValue: .usage, .invalidCombination: .usage, .changedSettings: .usage,
            .unusableInput: .dataError, .unavailable: .unavailable, .tooFewDescriptors: .unavailable,
            .busy: .unavailable, .unwritableOutput: .ioError, .internalFault: .software,
        ]
        #expect(Set(expected.keys) == Set(ConfigurationError.Code.allCases))
        for code in ConfigurationError.Code.allCases {
            let error = ConfigurationError(code, "a message")
            #expect(ExitStatus.failure(for: error).code == expected[code], "\(code)")
            #expect(ExitStatus.code(for: code) == expected[code])
        }
    }

    /// The one I/O error: its kind, not its name at the throw site, decides the status.
    @Test func everyIOFailureKindHasItsStatus() {
        #expect(ExitStatus.failure(for: StoreError.output("disk full")).code == .ioError)
        #expect(ExitStatus.failure(for: IOFailure.input("no payloads in x")).code == .dataError)
        #expect(ExitStatus.failure(for: IOFailure.start("port in use")).code == .unavailable)
        let cause = SystemError(code: ENOSPC, operation: "write", path: "/out/a")
        let failure = StoreError.output(cause)
        #expect(failure.systemError == cause && failure.message == cause.message && failure.kind == .output)
    }

    @Test func everyAnalyticsCodeHasItsStatusAndItsStableName() {
        let expected: [AnalyticsError.Code.Kind: (String, ExitCode)] = [
            .suiteNotFound: ("suite-not-found", .dataError), .suiteUnreadable: ("suite-unreadable", .dataError),
            .outboxUnreadable: ("outbox-unreadable", .dataError), .storage: ("storage", .ioError),
            .busy: ("busy", .unavailable), .invalidInput: ("invalid-input", .usage), .apiKey: ("api-key", .usage),
        ]
        #expect(Set(expected.keys) == Set(AnalyticsError.Code.Kind.allCases))
        let codes: [AnalyticsError.Code] = [
            .suiteNotFound, .suiteUnreadable, .storage, .outboxUnreadable, .busy, .invalidInput, .apiKey,
        ]
        #expect(Set(codes.map(\.kind)) == Set(AnalyticsError.Code.Kind.allCases), "one constant per kind")
        for code in codes {
            #expect(code.description == expected[code.kind]?.0)
            #expect(ExitStatus.code(for: code) == expected[code.kind]?.1, "\(code)")
        }
    }

    @Test func aSettingsMessageReadsAfterItsOption() {
        useCommandLineSpelling()
        let error = ConfigurationError.invalid(.shard, "takes I/N with 1 <= I <= N, for example 2/4")
        #expect(ExitStatus.failure(for: error).message == "--shard takes I/N with 1 <= I <= N, for example 2/4")
        var hinted = ConfigurationError(.unusableInput, "cannot read a.pem", setting: .caFile)
        hinted.hint = "Give the CA certificate (PEM) of the server."
        #expect(hinted.text == "--cacert cannot read a.pem. Give the CA certificate (PEM) of the server.")
    }

    @Test func aMissingCAFileIsTheSameStatusInEveryCommand() throws {
        // Downloads (process, batch, bench, fetch, demo) and analytics flush read --cacert; both refuse a
        // missing file as unusable input.
        var download = try Arguments(["--cacert", "/nonexistent.pem"], options: OptionGroup.download.options)
        do {
            _ = try TLSOptions(parsing: &download)
            Issue.record("a missing CA file was accepted")
        } catch {
            #expect(ExitStatus.failure(for: error).code == .dataError)
        }
        var configuration = FlushConfiguration(
            suite: try AppGroupSuiteFixture.suite(), endpointURL: "http://127.0.0.1:9", user: .externalID("u"))
        configuration.caFile = "/nonexistent.pem"
        do {
            _ = try configuration.endpoint(environment: ["BRAZE_REST_API_KEY": "k"])
            Issue.record("a missing CA file was accepted")
        } catch {
            #expect(ExitStatus.failure(for: error).code == .dataError)
        }
    }

    @Test func anOutcomesStatusCountsTheContentExtension() throws {
        var outcome = Outcome(verdict: .attached, reason: .ok, message: "shown", payloadBytes: 100)
        #expect(ExitStatus.code(for: outcome) == .success)
        outcome.contentExtension = ContentOutcome(outcome: .wouldCrash, message: "crashes")
        #expect(ExitStatus.code(for: outcome) == .failure)
        outcome.contentExtension = ContentOutcome(outcome: .configurationError, message: "two claim it")
        #expect(ExitStatus.code(for: outcome) == .failure)
        outcome.contentExtension = ContentOutcome(outcome: .shows, message: "shows")
        #expect(ExitStatus.code(for: outcome) == .success)
        #expect(
            ExitStatus.code(for: Outcome(verdict: .rejected, reason: .ok, message: "", payloadBytes: 100)) == .dataError
        )
        #expect(
            ExitStatus.code(for: Outcome(verdict: .expired, reason: .ok, message: "", payloadBytes: 100)) == .failure)
    }
}

enum AppGroupSuiteFixture {
    static func suite() throws -> AppGroupSuite {
        let folder = try Fixtures.temporaryFolder()
        try FileManager.default.createDirectory(
            atPath: folder + "/Library/Preferences", withIntermediateDirectories: true)
        return try AppGroupSuite(container: folder, suite: "group.test", creating: true)
    }
}
