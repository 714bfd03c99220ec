import Foundation
import RichPush

/// A JUnit XML report of a batch: one test case per payload, so CI systems (Jenkins, GitHub's test
/// reporters, GitLab) display the run natively.
///
/// - `attached` and `no-attachment` pass.
/// - An input that could not be read or parsed (`unreadable-input`, `invalid-json`,
///   `not-an-object`) is an `<error>`: the test could not run.
/// - `fallback`, `expired`, `not-invoked` and the other `rejected` payloads are a `<failure>` whose
///   type is `verdict/reason` and whose message is the outcome's; a payload whose content extension
///   would crash, or is misconfigured, fails as well (`would-crash/missing-key`): the image can show
///   in a view that crashes.
///
/// Cases are in input order (the batch's sorted input, NDJSON lines in file order), so identical
/// runs write identical files whatever order the payloads finished in. A case's `classname` is the
/// folder its payload is in, with dots for slashes (`campaign.week1`; a payload directly in the input
/// folder gets the input folder's name), or the NDJSON file's name for its lines, whose case names
/// keep the line (`sends.ndjson:12`). The suite's `time` is the run's wall time (the cases' times
/// overlap), and `timestamp` (local time, no zone, as the JUnit schema has it) and `hostname` say
/// when and where it ran.
package struct JUnitReport {
    /// The suite's name.
    package var suiteName = "richpush batch"
    /// When the run started.
    package var timestamp = Date()
    /// The machine it ran on.
    package var hostname = ProcessInfo.processInfo.hostName
    /// The run's wall time, in seconds.
    package var wallSeconds = 0.0
    /// The name of the batch's input folder, the class of the payloads directly in it.
    package var inputName = "payloads"
    /// The input folder or NDJSON file's folder as given, for each case's `file` attribute (the payload's
    /// path, which CI reporters link to); nil leaves the attribute out.
    package var inputRoot: String?
    /// The suite's `<properties>`, in order: what made the run (richpush's version, the options digest).
    package var properties: [(name: String, value: String)] = []

    private var cases: [(position: Int, name: String, xml: String)] = []
    private var failures = 0
    private var errors = 0

    /// The reasons that mean the input itself could not be read or parsed: an error, not a failure.
    static let errorReasons: Set<ReasonCode> = [.unreadableInput, .invalidJSON, .notAnObject]

    package init() {}

    /// Adds one payload's test case; `position` is its place in the input (cases are written in that order).
    package mutating func add(_ record: BatchRecord, position: Int = Int.max - 1) {
        add(record.outcome, input: record.input, phone: record.phone, position: position)
    }

    /// Adds the test case of one payload's `outcome`, named `input` (a batch's relative name, or the
    /// file `process` read), judged on `phone` when the run had an audience.
    package mutating func add(_ outcome: Outcome, input: String, phone: String? = nil, position: Int = Int.max - 1) {
        let record = outcome
        let time = String(format: "%.3f", max(0, record.elapsedMilliseconds) / 1000)
        var xml = "    <testcase classname=\"\(Self.escape(className(of: input)))\""
        // The phone it was judged on, when the run had an audience: `p.json (iOS 16.0)`.
        let name = input + (phone.map { " (iOS \($0))" } ?? "")
        xml += " name=\"\(Self.escape(name))\" time=\"\(time)\""
        if let file = file(of: input) { xml += " file=\"\(Self.escape(file))\"" }
        let view = record.contentExtension
        let viewFails = view.map { $0.outcome == .wouldCrash || $0.outcome == .configurationError } ?? false
        if record.verdict.showsAsIntended && !viewFails {
            cases.append((position, input, xml + "/>\n"))
            return
        }
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
        let element = Self.errorReasons.contains(record.reason) ? "error" : "failure"
        if element == "error" { errors += 1 } else { failures += 1 }
        xml += ">\n      <\(element) type=\"\(Self.escape(type))\" message=\"\(Self.escape(summary))\">"
        xml += Self.escape(detail) + "</\(element)>\n    </testcase>\n"
        cases.append((position, input, xml))
    }

    /// The payload's path for the `file` attribute: under ``inputRoot``, an NDJSON line's file.
    func file(of input: String) -> String? {
        guard let inputRoot else { return nil }
        var path = input
        if let colon = input.lastIndex(of: ":"), input.index(after: colon) < input.endIndex,
            input[input.index(after: colon)...].allSatisfy(\.isNumber)
        {
            path = String(input[..<colon])
        }
        if path.hasPrefix("/") || inputRoot.isEmpty { return path }
        return inputRoot.hasSuffix("/") ? inputRoot + path : inputRoot + "/" + path
    }

    /// The class of the gate's cases.
    package static let gateClassName = "richpush.gate"

    /// Adds one test case per threshold of the gate (class ``gateClassName``, named by the
    /// expression), after every payload: a failed threshold is a `<failure>`, so the file fails
    /// exactly when the gate does.
    package mutating func add(gate results: [ThresholdResult]) {
        for (offset, result) in results.enumerated() {
            let name = result.expression ?? result.name
            var xml = "    <testcase classname=\"\(Self.gateClassName)\" name=\"\(Self.escape(name))\" time=\"0.000\""
            if result.passed {
                xml += "/>\n"
            } else {
                failures += 1
                xml +=
                    ">\n      <failure type=\"threshold/\(Self.escape(result.name))\" message=\"\(Self.escape(result.message))\">"
                xml += Self.escape(result.message) + "</failure>\n    </testcase>\n"
            }
            // After every payload (whose positions are below Int.max), in the gate's order.
            cases.append((Int.max, String(format: "~%06d", offset), xml))
        }
    }

    /// The class of a payload named `input` (see the type's summary).
    func className(of input: String) -> String {
        if let colon = input.lastIndex(of: ":"), input[input.index(after: colon)...].allSatisfy(\.isNumber),
            input.index(after: colon) < input.endIndex
        {
            return String(input[..<colon])
        }
        let folder = (input as NSString).deletingLastPathComponent
        return folder.isEmpty ? inputName : folder.replacingOccurrences(of: "/", with: ".")
    }

    /// The whole document.
    package var xml: String {
        let ordered = cases.sorted { ($0.position, $0.name) < ($1.position, $1.name) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        let time = String(format: "%.3f", max(0, wallSeconds))
        let counts = "tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"\(errors)\""
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            + "<testsuites \(counts) time=\"\(time)\">\n"
            + "  <testsuite name=\"\(Self.escape(suiteName))\" \(counts) skipped=\"0\" time=\"\(time)\""
            + " timestamp=\"\(formatter.string(from: timestamp))\" hostname=\"\(Self.escape(hostname))\">\n"
            + propertiesXML + ordered.map(\.xml).joined() + "  </testsuite>\n</testsuites>\n"
    }

    /// The suite's `<properties>` element, or nothing without properties.
    var propertiesXML: String {
        guard !properties.isEmpty else { return "" }
        return "    <properties>\n"
            + properties.map {
                "      <property name=\"\(Self.escape($0.name))\" value=\"\(Self.escape($0.value))\"/>\n"
            }
            .joined() + "    </properties>\n"
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
