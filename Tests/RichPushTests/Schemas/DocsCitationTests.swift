import Foundation
import TestSupport
import Testing

/// Doc comments cite the rules in `docs/`, which is in the repository, and nothing that is not.
@Suite struct DocsCitationTests {
    @Test func everyCitedDocumentExistsAndNoneIsOutsideTheRepository() throws {
        var cited: Set<String> = []
        for folder in ["Sources", "Tests"] {
            let walker = try #require(FileManager.default.enumerator(atPath: Fixtures.root + "/" + folder))
            while let name = walker.nextObject() as? String {
                guard name.hasSuffix(".swift"), !name.hasSuffix("DocsCitationTests.swift") else { continue }
                let text = try String(contentsOfFile: Fixtures.root + "/\(folder)/\(name)", encoding: .utf8)
                #expect(!text.contains("PLATFORM" + ".md"), "\(folder)/\(name) cites a file not in the repository")
                let pattern = try NSRegularExpression(pattern: #"docs/[A-Za-z0-9_-]+\.md"#)
                for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    if let range = Range(match.range, in: text) { cited.insert(String(text[range])) }
                }
            }
        }
        #expect(!cited.isEmpty)
        for document in cited {
            #expect(FileManager.default.fileExists(atPath: Fixtures.root + "/" + document), "\(document)")
        }
    }
}
