import RichPush

/// What `compose` gives each sample request, read from `Samples/requests/expected.tsv`.
///
/// Lines are `request<TAB>sdk<TAB>result<TAB>detail`: `payload` and the apns-push-type (the payload
/// itself is `expected/<request>`), or a refusal's code and Braze's HTTP status (`-` when there is none);
/// `#` starts a comment. `richpush demo` and the tests read it through this parser.
package struct RequestSampleExpectations: Sendable {
    package struct Expectation: Sendable, Equatable {
        package var dialect: ComposeDialect
        /// `payload`, or a ``ComposeRefusal/Code`` raw value.
        package var result: String
        /// The apns-push-type for a payload, the HTTP status (or `-`) for a refusal.
        package var detail: String

        package init(dialect: ComposeDialect, result: String, detail: String) {
            self.dialect = dialect
            self.result = result
            self.detail = detail
        }

        /// Whether `result` (a composed push or a refusal) is the one expected; `payload` is the
        /// expected payload's bytes, for a payload row.
        package func matches(_ composed: Result<ComposedPush, ComposeRefusal>, payload: [UInt8]?) -> Bool {
            switch composed {
            case .success(let push):
                let trimmed = payload.map { Array($0.prefix { $0 != UInt8(ascii: "\n") }) }
                return result == "payload" && detail == push.headers.pushType.rawValue && trimmed == push.bytes
            case .failure(let refusal):
                return result == refusal.code.rawValue && detail == (refusal.status.map(String.init) ?? "-")
            }
        }
    }

    /// Rows in file order.
    package private(set) var rows: [(request: String, expectation: Expectation)] = []

    package init(text: String) throws(SampleExpectationsError) {
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(separator: "\t").map(String.init)
            guard fields.count == 4, let dialect = ComposeDialect(rawValue: fields[1]) else {
                throw SampleExpectationsError(line: number + 1)
            }
            rows.append((fields[0], Expectation(dialect: dialect, result: fields[2], detail: fields[3])))
        }
    }
}
