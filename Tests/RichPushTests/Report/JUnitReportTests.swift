import Foundation
import RichPush
import RichPushRuns
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The JUnit report as CI reporters read it: input order, errors apart from failures, classes from
/// folders, the run's wall time, timestamp and hostname.
@Suite struct JUnitReportTests {
    func record(_ name: String, _ verdict: Verdict, _ reason: ReasonCode, milliseconds: Double = 400) -> BatchRecord {
        var outcome = Outcome(
            verdict: verdict, reason: reason, message: "\(reason.rawValue) happened", payloadBytes: 10)
        outcome.elapsedMilliseconds = milliseconds
        return BatchRecord(
            item: BatchItem(
                name: name, outputName: name,
                source: .file(path: Array(("/in/" + name).utf8), folder: Array("/in".utf8))),
            output: "payloads/" + name,
            outcome: outcome)
    }

    @Test func casesAreInInputOrderWithErrorsApartFromFailures() throws {
        var report = JUnitReport()
        report.inputName = "campaign"
        report.wallSeconds = 0.7
        report.hostname = "ci-runner-3"
        report.timestamp = Date(timeIntervalSince1970: 1_764_590_400)
        // Added in completion order; positions are the input order.
        report.add(record("week1/b.json", .fallback, .httpStatus), position: 2)
        report.add(record("a.json", .attached, .ok), position: 0)
        report.add(record("sends.ndjson:12", .rejected, .invalidJSON), position: 3)
        report.add(record("week1/a.json", .rejected, .payloadTooLarge), position: 1)
        let xml = report.xml
        let names = xml.split(separator: "\n").compactMap { line -> String? in
            guard let start = line.range(of: " name=\"") else { return nil }
            return String(line[start.upperBound...].prefix { $0 != "\"" })
        }
        #expect(names == ["richpush batch", "a.json", "week1/a.json", "week1/b.json", "sends.ndjson:12"])
        #expect(xml.contains(#"<testsuites tests="4" failures="2" errors="1" time="0.700">"#), "\(xml)")
        #expect(xml.contains(#"tests="4" failures="2" errors="1" skipped="0" time="0.700" timestamp=""#))
        #expect(xml.contains(#"hostname="ci-runner-3""#))
        #expect(xml.range(of: #"timestamp="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d""#, options: .regularExpression) != nil)
        #expect(xml.contains(#"classname="campaign" name="a.json""#))
        #expect(xml.contains(#"classname="week1" name="week1/b.json""#))
        #expect(xml.contains(#"classname="sends.ndjson" name="sends.ndjson:12""#))
        #expect(
            xml.contains(
                #"<error type="rejected/invalid-json" message="rejected [invalid-json]: invalid-json happened">"#))
        #expect(xml.contains(#"<failure type="fallback/http-status""#))
        #expect(
            xml.contains(#"<failure type="rejected/payload-too-large""#), "APNs refusing a parsed payload is a failure")
        // The same records in another completion order give the same file.
        var again = JUnitReport()
        again.inputName = report.inputName
        again.wallSeconds = report.wallSeconds
        again.hostname = report.hostname
        again.timestamp = report.timestamp
        again.add(record("sends.ndjson:12", .rejected, .invalidJSON), position: 3)
        again.add(record("week1/a.json", .rejected, .payloadTooLarge), position: 1)
        again.add(record("a.json", .attached, .ok), position: 0)
        again.add(record("week1/b.json", .fallback, .httpStatus), position: 2)
        #expect(again.xml == xml)
        let parser = XMLParser(data: Data(xml.utf8))
        #expect(parser.parse(), "well-formed")
    }

    /// CI reporters link a case to its file and show the suite's properties: the `file` attribute is
    /// the payload's path under the input (an NDJSON line's file), the properties say what made the run.
    @Test func casesNameTheirFileAndTheSuiteItsProperties() throws {
        var report = JUnitReport()
        report.inputRoot = "Samples/payloads"
        report.properties = [("richpush.version", "0.2.0"), ("richpush.options_digest", "abc\"<")]
        report.add(record("week1/a.json", .attached, .ok), position: 0)
        report.add(record("sends.ndjson:12", .fallback, .httpStatus), position: 1)
        let xml = report.xml
        #expect(xml.contains(#"name="week1/a.json" time="0.400" file="Samples/payloads/week1/a.json"/>"#), "\(xml)")
        #expect(xml.contains(#"file="Samples/payloads/sends.ndjson">"#))
        #expect(xml.contains(#"<property name="richpush.options_digest" value="abc&quot;&lt;"/>"#))
        let document = try XMLDocument(data: Data(xml.utf8))
        #expect(try document.nodes(forXPath: "//testsuite/properties/property").count == 2)
        // Without a root and properties, neither is written.
        var plain = JUnitReport()
        plain.add(record("a.json", .attached, .ok))
        #expect(!plain.xml.contains("file=") && !plain.xml.contains("<properties>"))
    }
}
