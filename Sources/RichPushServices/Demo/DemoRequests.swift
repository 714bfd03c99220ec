import Foundation
import RichPush

/// The demo's check of the sample send requests: each of `Samples/requests/` composed, against
/// `Samples/requests/expected.tsv` (``RequestSampleExpectations``).
///
/// ```swift
/// let check = DemoRequests.check(folder: "Samples")
/// print(check.text)   // "Requests: 16 of 16 compose as Samples/requests/expected.tsv expects."
/// ```
package struct DemoRequests: Sendable {
    /// Requests checked.
    package var checked = 0
    /// One line per request that did not compose as expected (or that has no row, or no file).
    package var mismatches: [String] = []
    /// The folder read, as given.
    package var folder: String

    /// Composes every request the expected file names; a folder without requests checks nothing.
    package static func check(folder samples: String) -> DemoRequests {
        let folder = samples + "/requests"
        var check = DemoRequests(folder: folder)
        guard let text = try? String(contentsOfFile: folder + "/expected.tsv", encoding: .utf8) else { return check }
        let rows: [(request: String, expectation: RequestSampleExpectations.Expectation)]
        do { rows = try RequestSampleExpectations(text: text).rows } catch {
            check.mismatches.append("\(folder)/expected.tsv: \(error)")
            return check
        }
        for (name, expectation) in rows {
            check.checked += 1
            guard let bytes = FileManager.default.contents(atPath: folder + "/" + name) else {
                check.mismatches.append("\(name): cannot be read")
                continue
            }
            let result = Composer.compose([UInt8](bytes), options: ComposeOptions(dialect: expectation.dialect))
            let payload = FileManager.default.contents(atPath: folder + "/expected/" + name).map { [UInt8]($0) }
            guard !expectation.matches(result, payload: payload) else { continue }
            let got: String
            switch result {
            case .success(let push): got = "payload (\(push.headers.pushType.rawValue)) \(push.payload.text)"
            case .failure(let refusal): got = "\(refusal.code) (\(refusal.status.map(String.init) ?? "-"))"
            }
            check.mismatches.append(
                "\(name): expected \(expectation.result) (\(expectation.detail)), got \(got)".escapingControlCharacters)
        }
        return check
    }

    /// The summary line, then the mismatches.
    package var text: String {
        guard checked > 0 else { return "" }
        let head =
            mismatches.isEmpty
            ? "Requests: \(checked) of \(checked) compose as \(folder)/expected.tsv expects (richpush compose)."
            : "Requests: \(mismatches.count) of \(checked) do not compose as \(folder)/expected.tsv expects:"
        return ([head] + mismatches.map { "  " + $0 }).joined(separator: "\n")
    }
}
