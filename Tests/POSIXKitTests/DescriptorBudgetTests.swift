import Glibc
import POSIXKit
import Testing

@testable import POSIXKit

/// The descriptor budget's arithmetic and advice, and the one reading of the limits.
@Suite struct DescriptorBudgetTests {
    @Test func countsEachDownloadsShareAndWhatIsOpen() {
        let need = DescriptorBudget.Need(concurrency: 100, relayShare: 2, storing: true)
        #expect(need.perDownload == 4)
        let budget = DescriptorBudget(limit: 1024, hardLimit: 4096, open: 30)
        #expect(budget.needed(need) == 30 + DescriptorBudget.reserve + 400)
        #expect(budget.shortfall(need, option: "--concurrency") == nil)
        #expect(budget.fitting(need) == (1024 - 30 - DescriptorBudget.reserve) / 4)
        // What the run holds beside its downloads (the relay's own) counts once.
        let relayed = DescriptorBudget.Need(concurrency: 100, relayShare: 2, storing: true, fixed: 4)
        #expect(budget.needed(relayed) == budget.needed(need) + 4)
        #expect(budget.fitting(relayed) == (1024 - 30 - DescriptorBudget.reserve - 4) / 4)
        let huge = DescriptorBudget.Need(concurrency: Int.max, relayShare: 2, storing: true)
        #expect(budget.needed(huge) == Int.max, "saturates")
        #expect(DescriptorBudget.Need(concurrency: 1, relayShare: 0, storing: false).perDownload == 1)
    }

    @Test func adviceFitsWhatTheToolAcceptsAndNamesTheCallersOption() throws {
        let need = DescriptorBudget.Need(concurrency: 50, relayShare: 0, storing: false)
        let tight = try #require(
            DescriptorBudget(limit: 100, hardLimit: 100, open: 20).shortfall(need, option: "--concurrency"))
        #expect(tight.contains("lower --concurrency to 16"), "\(tight)")
        #expect(tight.contains("Raise the hard limit"))
        let hopeless = try #require(
            DescriptorBudget(limit: 70, hardLimit: 70, open: 20).shortfall(need, option: "--concurrency"))
        #expect(!hopeless.contains("lower --concurrency"), "\(hopeless)")
        let raisable = try #require(
            DescriptorBudget(limit: 100, hardLimit: 1 << 20, open: 3).shortfall(need, option: "-j"))
        #expect(raisable.contains("Raise it with 'ulimit -n 117'"), "\(raisable)")
        #expect(raisable.hasPrefix("-j 50 needs about 117 open files"), "\(raisable)")
        let relayed = try #require(
            DescriptorBudget(limit: 100, hardLimit: 100, open: 3)
                .shortfall(DescriptorBudget.Need(concurrency: 50, relayShare: 2, storing: true), option: "-j"))
        #expect(relayed.contains("4 per download: a socket, 2 for the network profile's relay, a temporary file"))
    }

    /// One download (`process`) is checked like a batch, with no concurrency to lower.
    @Test func oneDownloadIsRefusedWithTheNumbersAndNoConcurrencyAdvice() throws {
        let need = DescriptorBudget.Need(concurrency: 1, relayShare: 0, storing: true)
        #expect(DescriptorBudget(limit: 1024, hardLimit: 1024, open: 10).shortfall(single: need) == nil)
        let fits = DescriptorBudget(limit: 10 + DescriptorBudget.reserve + 2, hardLimit: 100, open: 10)
        #expect(fits.shortfall(single: need) == nil, "exactly enough")
        let short = try #require(
            DescriptorBudget(limit: 20, hardLimit: 4096, open: 10).shortfall(single: need))
        let total = 10 + DescriptorBudget.reserve + 2
        #expect(short.hasPrefix("too many open files: one download needs about \(total) open files"), "\(short)")
        #expect(short.contains("(a socket, a temporary file; 10 already open;"), "\(short)")
        #expect(short.contains("Raise it with 'ulimit -n \(total)'"), "\(short)")
        #expect(!short.contains("lower"), "\(short)")
    }

    @Test func theLimitsAreReadInOnePlaceWithOneAnswerForUnknown() throws {
        let limits = try #require(DescriptorBudget.limits(), "getrlimit works on Linux")
        #expect(limits.soft >= 1 && limits.soft <= limits.hard)
        #expect(DescriptorBudget.softLimit == limits.soft)
        #expect(DescriptorBudget.text(forLimit: nil) == "unknown")
        #expect(DescriptorBudget.text(forLimit: Int.max) == "unlimited")
        #expect(DescriptorBudget.text(forLimit: 1024) == "1024")
        let current = DescriptorBudget.current()
        #expect(current.limit == limits.soft && current.hardLimit == limits.hard)
        #expect(current.open >= 3, "at least the standard streams")
        #expect(DescriptorBudget.ensureSoftLimit(atLeast: 1), "a limit already above the minimum is enough")
    }

    @Test func countsOpenDescriptorsAndExhaustion() {
        // Other tests open files meanwhile: only a lower bound holds.
        #expect(DescriptorBudget.openCount() >= 3)
        #expect(DescriptorExhaustion.note(errno: ENOENT) == false)
        #expect(SystemError(code: EMFILE, operation: "open").isDescriptorExhaustion)
        #expect(!SystemError(code: ENOENT, operation: "open").isDescriptorExhaustion)
    }
}
