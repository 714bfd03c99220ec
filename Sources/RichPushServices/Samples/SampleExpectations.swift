import RichPush

/// The expected verdict and reason for each sample payload, read from `Samples/expected.tsv`.
///
/// Part of the product, not only of the tests: `richpush demo` checks each sample's verdict against
/// it and fails when one differs, and the test suite reads the file through this same parser so
/// both agree on what the samples should get. Lines are `payload<TAB>verdict<TAB>reason`, then
/// optionally `<TAB>content`: the expanded view expected with the sample app (`Samples/app`),
/// as `outcome` or `outcome:detail` (the extension that shows, or the reason), `-` for none; `#` starts
/// a comment.
package struct SampleExpectations: Sendable {
    package struct Expectation: Sendable, Equatable {
        package var verdict: Verdict
        package var reason: ReasonCode
        /// The content-extension outcome with the sample app, in ``contentLabel(_:)``'s form.
        package var content: String?
    }

    /// A content-extension outcome as expected.tsv writes it: `shows:NotificationContent`,
    /// `default:no-category`, `would-crash:missing-key`; `-` when there is none.
    package static func contentLabel(_ outcome: ContentOutcome?) -> String {
        guard let outcome else { return "-" }
        let detail = outcome.outcome == .shows ? outcome.extensionName : outcome.reason
        return outcome.outcome.rawValue + (detail.map { ":" + $0 } ?? "")
    }

    package private(set) var byPayload: [String: Expectation] = [:]

    /// Parses the file's text; a malformed line is an error naming its number.
    package init(text: String) throws(SampleExpectationsError) {
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = trimmed.split(separator: "\t").map(String.init)
            guard fields.count == 3 || fields.count == 4, let verdict = Verdict(rawValue: fields[1]),
                let reason = ReasonCode(rawValue: fields[2])
            else { throw SampleExpectationsError(line: number + 1) }
            byPayload[fields[0]] = Expectation(
                verdict: verdict, reason: reason, content: fields.count == 4 ? fields[3] : nil)
        }
    }
}

package struct SampleExpectationsError: Error, Sendable, CustomStringConvertible {
    package var line: Int
    package var description: String {
        "expected.tsv line \(line) is not 'payload<TAB>verdict<TAB>reason[<TAB>content]'"
    }
}
