import Foundation
import RichPush

/// A demo's outcomes set against the expectations: the table, the reasons, the JSON lines, and how
/// many payloads did not get the verdict they should.
///
/// ```swift
/// let result = DemoResult(samples: samples, outcomes: outcomes, withApp: false, keepFolder: nil)
/// print(result.text)
/// ```
package struct DemoResult: Sendable {
    package let samples: DemoSamples
    package let outcomes: [String: Outcome]
    /// Whether content extensions were given (the table shows the expanded view).
    package let withApp: Bool
    /// Where the attachments are kept, or nil when they were removed with the run.
    package let keepFolder: String?

    package init(samples: DemoSamples, outcomes: [String: Outcome], withApp: Bool, keepFolder: String?) {
        self.samples = samples
        self.outcomes = outcomes
        self.withApp = withApp
        self.keepFolder = keepFolder
    }

    /// Whether `outcome` matches what `expected.tsv` expects of `name` (nil: nothing expected).
    package func matches(_ name: String, _ outcome: Outcome) -> Bool? {
        let content = SampleExpectations.contentLabel(outcome.contentExtension)
        return samples.expectations.byPayload[name].map {
            $0.verdict == outcome.verdict && $0.reason == outcome.reason
                && (!withApp || $0.content == nil || $0.content == content)
        }
    }

    /// Payloads that did not get the expected verdict.
    package var unexpected: Int {
        samples.names.filter { name in outcomes[name].map { matches(name, $0) == false } ?? false }.count
    }

    /// One JSON line per payload; without a kept folder no file is named (it is gone after the run).
    package var lines: [DemoLine] {
        samples.names.compactMap { name in
            guard let outcome = outcomes[name] else { return nil }
            var shown = outcome
            if keepFolder == nil { shown.attachment?.file = nil }
            return DemoLine(payload: name, expectedMatch: matches(name, outcome), outcome: shown)
        }
    }

    /// The table, why each requested attachment would not show, the counts, and what to run next.
    package var text: String {
        var table = TextTable(
            ["PAYLOAD", "SDK", "VERDICT", "REASON"] + (withApp ? ["EXPANDED VIEW"] : []) + [
                "BYTES", "TIME", "EXPECTED",
            ],
            rightAligned: withApp ? [5, 6] : [4, 5])
        for name in samples.names {
            guard let outcome = outcomes[name] else { continue }
            let content = SampleExpectations.contentLabel(outcome.contentExtension)
            let expectedText = samples.expectations.byPayload[name].map {
                "\($0.verdict.rawValue)/\($0.reason.rawValue)" + (withApp ? " " + ($0.content ?? "-") : "")
            }
            table.append(
                [name, outcome.sdk ?? "braze", outcome.verdict.rawValue, outcome.reason.rawValue]
                    + (withApp ? [content] : []) + [
                        outcome.download.map { String($0.bytes) } ?? "-",
                        String(format: "%.0f ms", outcome.elapsedMilliseconds),
                        matches(name, outcome).map { $0 ? "yes" : "NO, expected \(expectedText ?? "")" } ?? "-",
                    ])
        }
        var lines = [table.rendered]
        let why = samples.names.compactMap { name in outcomes[name].flatMap { Self.why(name, $0) } }
        if !why.isEmpty { lines.append("\nWhy:\n" + why.joined(separator: "\n")) }
        let counts = Dictionary(grouping: outcomes.values, by: \.verdict).mapValues(\.count)
        let summary = Verdict.allCases.compactMap { verdict in counts[verdict].map { "\($0) \(verdict.rawValue)" } }
        lines.append("\n\(samples.names.count) payloads: " + summary.joined(separator: ", ") + ".")
        lines.append(
            unexpected == 0
                ? "Every payload got the verdict Samples/expected.tsv expects."
                : "\(unexpected) payload(s) did not get the expected verdict.")
        if let keepFolder { lines.append("Attachments are in \(keepFolder).") }
        lines.append("Run one yourself: richpush process FILE")
        return lines.joined(separator: "\n")
    }

    /// Why a requested attachment (or the expanded view) would not show, in the words `process` uses.
    static func why(_ name: String, _ outcome: Outcome) -> String? {
        var lines: [String] = []
        if !outcome.verdict.showsAsIntended {
            lines.append(
                "  \(name): \(outcome.message.escapingControlCharacters)"
                    + (outcome.hint.map { " Hint: \($0.escapingControlCharacters)" } ?? ""))
        }
        if let view = outcome.contentExtension, view.outcome != .shows, view.reason != "no-category" {
            lines.append(
                "  \(name) (expanded view): \(view.message.escapingControlCharacters)"
                    + (view.hint.map { " Hint: \($0.escapingControlCharacters)" } ?? ""))
        }
        return lines.isEmpty ? nil : lines.joined(separator: "\n")
    }
}

/// One line of the demo's JSON: `payload` and `expected_match` around the members of the shared outcome shape.
package struct DemoLine: Sendable {
    package var payload: String
    package var expectedMatch: Bool?
    package var outcome: Outcome

    /// The line as `demo --json` prints it (`Samples/schemas/demo-line.schema.json`): the outcome's
    /// members written by the outcome's one serializer.
    package var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("payload", .string(payload))]
        if let expectedMatch { members.append(("expected_match", .bool(expectedMatch))) }
        return .object(members + outcome.jsonMembers)
    }
}
