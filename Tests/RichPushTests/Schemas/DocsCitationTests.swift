import Foundation
import TestSupport
import Testing

/// Every Markdown document the code cites (`docs/platform.md`, `README.md`, `bench/RESULTS.md`) is
/// in the repository: the rules richpush emulates are cited from `docs/`.
@Suite struct DocsCitationTests {
    @Test func everyCitedDocumentIsInTheRepository() throws {
        let pattern = try NSRegularExpression(pattern: #"(?<![\w/.-])[A-Za-z0-9_/-]+\.md\b"#)
        var cited: [String: String] = [:]
        for folder in ["Sources", "Tests"] {
            let walker = try #require(FileManager.default.enumerator(atPath: Fixtures.root + "/" + folder))
            while let name = walker.nextObject() as? String {
                guard name.hasSuffix(".swift") else { continue }
                // Citations are in comments; a file name in test data is not one.
                let text = try String(contentsOfFile: Fixtures.root + "/\(folder)/\(name)", encoding: .utf8)
                    .split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
                    .joined(separator: "\n")
                for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    if let range = Range(match.range, in: text) { cited[String(text[range])] = "\(folder)/\(name)" }
                }
            }
        }
        #expect(cited["docs/platform.md"] != nil)
        for (document, citer) in cited.sorted(by: { $0.key < $1.key }) {
            #expect(
                FileManager.default.fileExists(atPath: Fixtures.root + "/" + document), "\(citer) cites \(document)")
        }
    }
}
