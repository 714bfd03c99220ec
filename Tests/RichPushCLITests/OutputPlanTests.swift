import Foundation
import POSIXKit
import RichPush
import TestSupport
import Testing

@testable import RichPushCLI

/// The one output policy: every output opened before the work, stdout taken at most once, files
/// made with the umask's mode.
@Suite struct OutputPlanTests {
    @Test func stdoutTakenTwiceIsAUsageError() throws {
        #expect(throws: UsageError.self) { _ = try OutputPlan([("--json", "-"), ("--html", "-")]) }
        #expect(throws: UsageError.self) { _ = try OutputPlan([("--json", "-"), ("--html", "/dev/stdout")]) }
        #expect(throws: UsageError.self) {
            _ = try OutputPlan([("--html", "-")], reservedStandardOutput: "the merged JSON")
        }
        let one = try OutputPlan([("--json", "-"), ("--html", nil)])
        defer { one.discard() }
        #expect(one.takesStandardOutput && one.standardOutputOption == "--json")
        #expect(!one.has("--html"))
    }

    @Test func aMissingFolderStopsThePlanAndLeavesNothing() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        do {
            _ = try OutputPlan([("--json", folder + "/report.json"), ("--html", folder + "/missing/r.html")])
            Issue.record("a missing folder was accepted")
        } catch {
            let failure = ExitStatus.failure(for: error)
            #expect(failure.code == .ioError)
            #expect(failure.message.hasPrefix("--html: "))
        }
        // The first output's temporary is gone with the plan.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }

    @Test func aCommittedFileHasTheUmasksModeAndAFIFOIsWrittenThrough() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = folder + "/pipe"
        #expect(mkfifo(fifo, 0o600) == 0)
        let plan = try OutputPlan([("--json", folder + "/report.json")])
        try plan.commit("--json", Array("{}\n".utf8))
        var info = stat()
        #expect(stat(folder + "/report.json", &info) == 0)
        #expect(info.st_mode & 0o777 == SystemCall.creationMode)
        #expect(SystemCall.creationMode & 0o044 == 0o044 || SystemCall.creationMode & 0o044 == 0)
        // The umask read from /proc is the process's.
        let mask = umask(0o022)
        umask(mask)
        #expect(SystemCall.creationMode == 0o666 & ~mask)
        // A FIFO is not replaced (its reader gets the bytes): opening it for the plan succeeds.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        defer { close(reader) }
        let viaFIFO = try OutputPlan([("--html", fifo)])
        try viaFIFO.commit("--html", Array("<html>".utf8))
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(read(reader, &buffer, 16) == 6)
    }
}
