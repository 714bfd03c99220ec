import Foundation

/// A JUnit XML report of a batch: one test case per payload, a failure for every requested
/// attachment that would not show, so CI systems display the run natively.
///
/// `attached` and `no-attachment` pass; `fallback`, `expired` and `not-invoked` fail with the
/// reason as the failure type; `rejected` payloads fail too (the campaign would not deliver them). A
/// payload whose content extension would crash, or is misconfigured, fails as well (`would-crash/missing-key`):
/// the image can show in a view that crashes.
/// Records are read one at a time; the document itself is small (about 200 bytes a payload).
public struct JUnitReport {
    private var body = ""
    private var tests = 0
    private var failures = 0
    private var seconds = 0.0

    public init() {}

    /// Adds one payload's test case.
    public mutating func add(_ record: BatchRecord) {
        tests += 1
        let time = record.elapsedMilliseconds / 1000
        seconds += time
        body += "    <testcase classname=\"richpush.batch\" name=\"\(Self.escape(record.input))\""
        body += " time=\"\(String(format: "%.3f", time))\""
        let view = record.contentExtension
        let viewFails = view.map { $0.outcome == .wouldCrash || $0.outcome == .configurationError } ?? false
        if record.verdict.showsAsIntended && !viewFails {
            body += "/>\n"
            return
        }
        failures += 1
        var (type, summary, detail) = (
            "\(record.verdict.rawValue)/\(record.reason.rawValue)",
            record.verdict.rawValue + " [" + record.reason.rawValue + "]: " + record.message, record.message
        )
        if let view, viewFails, record.verdict.showsAsIntended {
            type = "\(view.outcome.rawValue)/\(view.reason ?? "")"
            summary = "\(view.outcome.rawValue) [\(view.reason ?? "")]: \(view.message)"
            detail = view.message
        }
        if let hint = record.hint { detail += "\nHint: " + hint }
        if let url = record.url { detail += "\nURL: " + url }
        body += ">\n      <failure type=\"\(Self.escape(type))\""
        body += " message=\"\(Self.escape(summary))\">"
        body += Self.escape(detail) + "</failure>\n    </testcase>\n"
    }

    /// The whole document.
    public var xml: String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            + "<testsuites tests=\"\(tests)\" failures=\"\(failures)\" errors=\"0\">\n"
            + "  <testsuite name=\"richpush batch\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"0\""
            + " skipped=\"0\" time=\"\(String(format: "%.3f", seconds))\">\n" + body + "  </testsuite>\n</testsuites>\n"
    }

    /// Escapes text for XML attributes and content; drops characters XML 1.0 cannot carry.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n": out += "&#10;"
            case "\t": out += "&#9;"
            case _ where scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value): continue
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
