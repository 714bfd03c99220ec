/// The expected verdict and reason for each sample payload, read from `Samples/expected.tsv`.
///
/// Part of the product, not only of the tests: `richpush demo` checks each sample's verdict against
/// it and exits 1 when one differs, and the test suite reads the file through this same parser so
/// both agree on what the samples should get. Lines are `payload<TAB>verdict<TAB>reason`; `#` starts a comment.
public struct SampleExpectations: Sendable {
    public struct Expectation: Sendable, Equatable {
        public var verdict: Verdict
        public var reason: ReasonCode
    }

    public private(set) var byPayload: [String: Expectation] = [:]

    /// Parses the file's text; a malformed line is an error naming its number.
    public init(text: String) throws(SampleExpectationsError) {
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = trimmed.split(separator: "\t").map(String.init)
            guard fields.count == 3, let verdict = Verdict(rawValue: fields[1]),
                let reason = ReasonCode(rawValue: fields[2])
            else { throw SampleExpectationsError(line: number + 1) }
            byPayload[fields[0]] = Expectation(verdict: verdict, reason: reason)
        }
    }
}

public struct SampleExpectationsError: Error, Sendable, CustomStringConvertible {
    public var line: Int
    public var description: String { "expected.tsv line \(line) is not 'payload<TAB>verdict<TAB>reason'" }
}
