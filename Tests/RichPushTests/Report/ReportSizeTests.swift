import Foundation
import Testing

@testable import RichPush
@testable import RichPushRuns

/// A file larger than any report is refused in one pass over its bytes, before a decoder builds it
/// (a 190 MB series took 16 s to decode, and an unknown key's was then ignored).
@Suite struct ReportSizeTests {
    static func array(_ count: Int) -> String {
        "[" + (0..<count).map(String.init).joined(separator: ",") + "]"
    }

    @Test func theLargestReportPassesAndOneEntryMoreIsRefused() throws {
        try ReportDamage.checkSize(of: Array(#"{"timeline":\#(Self.array(BenchReport.maxTimelineSeconds + 1))}"#.utf8))
        #expect(throws: ReportDamage.self) {
            try ReportDamage.checkSize(of: Array(#"{"x":\#(Self.array(BenchReport.maxTimelineSeconds + 2))}"#.utf8))
        }
        // Commas and brackets inside strings are text, not entries.
        let text = String(repeating: ",[{", count: 200_000)
        try ReportDamage.checkSize(of: Array(#"{"s":"\#(text)","t":"a\"[,"}"#.utf8))
    }

    @Test func tooManyValuesOrTooDeepIsRefused() throws {
        // The same rules at a small scale: 25 arrays of 90 values pass 90 per array but not 2,000 in all.
        let many = Array(("[" + (0..<25).map { _ in Self.array(90) }.joined(separator: ",") + "]").utf8)
        try ReportDamage.checkSize(of: many, maxContainerEntries: 100, maxValues: 3000)
        #expect(throws: ReportDamage.self) {
            try ReportDamage.checkSize(of: many, maxContainerEntries: 100, maxValues: 2000)
        }
        #expect(ReportDamage.maxValues >= 40 * BenchReport.maxTimelineSeconds, "a week's timeline fits")
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: ReportDamage.self) { try ReportDamage.checkSize(of: Array(deep.utf8)) }
    }

    @Test func aBenchReportWithAHugeSeriesIsRefusedBeforeDecoding() {
        let data = Data(#"{"schema":"richpush.bench/2","series":\#(Self.array(700_000))}"#.utf8)
        do {
            _ = try BenchReport.read(data)
            Issue.record("read a report with a 700,000-entry series")
        } catch {
            #expect(error.message.contains("no report holds that many"), "\(error.message)")
        }
    }
}
