import Foundation
import POSIXKit
import TestSupport
import Testing

@testable import RichPush

/// The descriptor budget in richpush's terms (the relay's share, the command's setting), and how
/// running out mid-run turns a host's failure into the client's.
@Suite struct DescriptorBlameTests {
    /// Messages spell settings as the command line does, as users read them.
    init() { useCommandLineSpelling() }

    @Test func aRelayedDownloadHoldsTheRelaysShareAndAdviceNamesTheSetting() throws {
        let need = DescriptorBudget.Need(concurrency: 100, relayed: true, storing: true)
        #expect(need.relayShare == NetworkRelay.descriptorsPerTransfer)
        #expect(need.perDownload == 2 + NetworkRelay.descriptorsPerTransfer)
        #expect(DescriptorBudget.Need(concurrency: 1, relayed: false, storing: false).perDownload == 1)
        let shortfall = try #require(
            DescriptorBudget(limit: 100, hardLimit: 100, open: 20).shortfall(need, setting: .concurrency))
        #expect(shortfall.hasPrefix("--concurrency 100 needs about"), "\(shortfall)")
    }

    @Test func aHostsFailureIsTheClientsWhenDescriptorsRanOutMeanwhile() {
        let failed = Outcome(verdict: .fallback, reason: .tlsFailed, message: "TLS failed", payloadBytes: 10)
        // Generations passed in: noting a real exhaustion here would blame other tests' failures.
        #expect(ServiceExtension.blamingDescriptorExhaustion(failed, since: 7, now: 7).reason == .tlsFailed)
        let blamed = ServiceExtension.blamingDescriptorExhaustion(failed, since: 7, now: 8)
        #expect(blamed.reason == .tooManyOpenFiles && blamed.verdict == .fallback)
        #expect(blamed.message.contains("the client's limit") && blamed.message.contains("TLS failed"))
        #expect(blamed.message.contains("(the limit is \(DescriptorBudget.softLimitText))"))
        // What the host really said (a 404) stays the host's.
        let missing = Outcome(verdict: .fallback, reason: .httpStatus, message: "404", payloadBytes: 10)
        #expect(ServiceExtension.blamingDescriptorExhaustion(missing, since: 7, now: 8).reason == .httpStatus)
    }

    @Test func theEngineStartMessageSaysTooManyOpenFilesOnlyForThatCode() {
        let exhausted = FetchError(.tooManyOpenFiles, "the fetch engine cannot start: no descriptor left")
        #expect(exhausted.engineStartMessage.contains("too many open files (the limit is "))
        let other = FetchError(.transferFailed, "the fetch engine cannot start: libcurl could not be initialised")
        #expect(other.engineStartMessage == other.message)
    }
}
