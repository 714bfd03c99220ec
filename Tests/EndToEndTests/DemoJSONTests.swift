import Foundation
import TestSupport
import Testing

/// `richpush demo --json` run as a separate process.
@Suite struct DemoJSONTests {
    /// Every line is the shared outcome shape plus the sample's name; without `--out` the attachments
    /// go with the run's temporary folder, so no line names a file.
    @Test func printsOneOutcomeLinePerSampleAndNamesNoRemovedFile() async throws {
        // A budget with room for the samples that attach, under the slow samples' 40 s (they still expire).
        let run = try await RichPushBinary.run(
            ["demo", "--json", "--budget", "\(SamplePayloads.budgetSeconds)", "--samples", Fixtures.root + "/Samples"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == SamplePayloads.expectations.count)
        var attached = 0
        for line in lines {
            #expect(OutputSchemas.violations(of: line, against: "demo-line") == [], "\(line)")
            let object = try #require(try JSONSchemaCheck.parse(line) as? [String: Any])
            if let attachment = object["attachment"] as? [String: Any] {
                attached += 1
                #expect(attachment["file"] == nil, "\(line)")
            }
        }
        #expect(attached > 0)
    }
}
