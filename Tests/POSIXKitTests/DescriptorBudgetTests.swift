import Foundation
import TestSupport
import Testing

@testable import RichPush

/// The descriptor budget's arithmetic and advice, and how running out mid-run turns a host's
/// failure into the client's.
@Suite struct DescriptorBudgetTests {
    /// Messages spell settings as the command line does, as users read them.
    init() { useCommandLineSpelling() }

    @Test func countsEachDownloadsShareAndWhatIsOpen() {
        let need = DescriptorBudget.Need(concurrency: 100, relayed: true, storing: true)
        #expect(need.perDownload == 4)
        let budget = DescriptorBudget(limit: 1024, hardLimit: 4096, open: 30)
        #expect(budget.needed(need) == 30 + DescriptorBudget.reserve + 400)
        #expect(budget.shortfall(need, setting: .concurrency) == nil)
        #expect(budget.fitting(need) == (1024 - 30 - DescriptorBudget.reserve) / 4)
        let huge = DescriptorBudget.Need(concurrency: Int.max, relayed: true, storing: true)
        #expect(budget.needed(huge) == Int.max, "saturates")
    }

    @Test func adviceFitsWhatTheToolAccepts() throws {
        let need = DescriptorBudget.Need(concurrency: 50, relayed: false, storing: false)
        let tight = try #require(
            DescriptorBudget(limit: 100, hardLimit: 100, open: 20).shortfall(need, setting: .concurrency))
        #expect(tight.contains("lower --concurrency to 16"), "\(tight)")
        #expect(tight.contains("Raise the hard limit"))
        let hopeless = try #require(
            DescriptorBudget(limit: 70, hardLimit: 70, open: 20).shortfall(need, setting: .concurrency))
        #expect(!hopeless.contains("lower --concurrency"), "\(hopeless)")
        let raisable = try #require(
            DescriptorBudget(limit: 100, hardLimit: 1 << 20, open: 3).shortfall(need, setting: .concurrency))
        #expect(raisable.contains("Raise it with 'ulimit -n 117'"), "\(raisable)")
    }

    @Test func aHostsFailureIsTheClientsWhenDescriptorsRanOutMeanwhile() {
        let failed = Outcome(verdict: .fallback, reason: .tlsFailed, message: "TLS failed", payloadBytes: 10)
        // Generations passed in: noting a real exhaustion here would blame other tests' failures.
        #expect(ServiceExtension.blamingDescriptorExhaustion(failed, since: 7, now: 7).reason == .tlsFailed)
        let blamed = ServiceExtension.blamingDescriptorExhaustion(failed, since: 7, now: 8)
        #expect(blamed.reason == .tooManyOpenFiles && blamed.verdict == .fallback)
        #expect(blamed.message.contains("the client's limit") && blamed.message.contains("TLS failed"))
        // What the host really said (a 404) stays the host's.
        let missing = Outcome(verdict: .fallback, reason: .httpStatus, message: "404", payloadBytes: 10)
        #expect(ServiceExtension.blamingDescriptorExhaustion(missing, since: 7, now: 8).reason == .httpStatus)
        #expect(DescriptorExhaustion.note(errno: ENOENT) == false)
    }
}
