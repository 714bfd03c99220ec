import Foundation
import RichPush
import TestSupport
import Testing

@testable import RichPushCLI

/// The documents users read hold together: the README guides (contents, recipes, at most about 600
/// lines), the guide tables every reason code, every link and anchor leads somewhere, and the
/// changelog and the git tags name the version `--version` prints.
@Suite struct DocumentationTests {
    static func read(_ path: String) throws -> String {
        try String(contentsOfFile: Fixtures.root + "/" + path, encoding: .utf8)
    }

    /// The Markdown documents of the repository that users are pointed at.
    static var documents: [String] {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: Fixtures.root + "/docs")) ?? []
        return ["README.md", "CHANGELOG.md", "bench/RESULTS.md", "Samples/README.md"]
            + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    @Test func theGuideTablesEveryReasonAndFetchCode() throws {
        let guide = try Self.read("docs/guide.md")
        for reason in ReasonCode.allCases {
            #expect(guide.contains("| `\(reason.rawValue)` |"), "docs/guide.md lacks a row for \(reason.rawValue)")
        }
        for code in FetchError.Code.all {
            #expect(guide.contains("| `\(code.description)` |"), "docs/guide.md lacks a row for \(code)")
        }
    }

    @Test func theREADMEGuides() throws {
        let readme = try Self.read("README.md")
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= 620, "the README has \(lines) lines; move reference material to docs/")
        #expect(readme.contains("## Contents"))
        for recipe in [
            "Recipe: gate a folder of payloads in GitHub Actions", "Recipe: check a Braze send request",
            "Recipe: size a CDN for a send, and read the report", "Recipe: one burst from many machines",
            "The library",
        ] {
            #expect(readme.contains("## " + recipe), "the README lacks '\(recipe)'")
        }
        // Every exit status richpush uses has its row.
        for code in ExitCode.allCases {
            #expect(readme.contains("| \(code.rawValue) | "), "the README's exit table lacks \(code.rawValue)")
        }
    }

    /// GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped, spaces
    /// as hyphens.
    static func anchor(_ heading: some StringProtocol) -> String {
        String(
            heading.lowercased().unicodeScalars.filter {
                CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" || $0 == " "
            }.map { $0 == " " ? "-" : Character($0) })
    }

    /// The anchors a document defines: its headings outside code blocks, and `<a id="…">`.
    static func anchors(of text: String) -> Set<String> {
        var found = Set<String>()
        var inCode = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            if inCode { continue }
            if line.hasPrefix("#") {
                let title = line.drop { $0 == "#" }.drop { $0 == " " }
                found.insert(anchor(title))
            }
            var rest = Substring(line)
            while let open = rest.range(of: "<a id=\"") {
                let tail = rest[open.upperBound...]
                guard let close = tail.firstIndex(of: "\"") else { break }
                found.insert(String(tail[..<close]))
                rest = tail[close...]
            }
        }
        return found
    }

    @Test func everyLinkAndAnchorLeadsSomewhere() throws {
        let pattern = try NSRegularExpression(pattern: #"\]\(([^)\s]+)\)"#)
        var checked = 0
        for document in Self.documents {
            let text = try Self.read(document)
            // Links inside code blocks are code, not links.
            var prose = ""
            var inCode = false
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("```") { inCode.toggle() }
                if !inCode { prose += line + "\n" }
            }
            let folder = (document as NSString).deletingLastPathComponent
            for match in pattern.matches(in: prose, range: NSRange(prose.startIndex..., in: prose)) {
                guard let range = Range(match.range(at: 1), in: prose) else { continue }
                let target = String(prose[range])
                if target.hasPrefix("http://") || target.hasPrefix("https://") || target.hasPrefix("mailto:") {
                    continue
                }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let file =
                    parts[0].isEmpty
                    ? document
                    : ((folder as NSString).appendingPathComponent(String(parts[0])) as NSString).standardizingPath
                #expect(
                    FileManager.default.fileExists(atPath: Fixtures.root + "/" + file),
                    "\(document): the link \(target) leads to no file")
                if parts.count == 2, file.hasSuffix(".md") {
                    let anchors = Self.anchors(of: (try? Self.read(file)) ?? "")
                    #expect(anchors.contains(String(parts[1])), "\(document): \(target) names no heading of \(file)")
                }
                checked += 1
            }
        }
        #expect(checked > 50)
    }

    @Test func theAnchorRuleIsGitHubs() {
        #expect(Self.anchor("The app's own files: `--app`") == "the-apps-own-files---app")
        #expect(
            Self.anchor("Recipe: size a CDN for a send, and read the report")
                == "recipe-size-a-cdn-for-a-send-and-read-the-report")
        #expect(Self.anchor("Kubernetes: `deploy/kubernetes/`") == "kubernetes-deploykubernetes")
    }

    /// The version `--version` prints has its changelog section, and its git tag when the clone has tags.
    @Test func theChangelogAndTheTagsNameTheVersion() throws {
        let version = RichPushCommand.version
        let changelog = try Self.read("CHANGELOG.md")
        #expect(changelog.contains("\n## [\(version)] - "), "CHANGELOG.md has no section for \(version)")
        guard FileManager.default.fileExists(atPath: Fixtures.root + "/.git") else { return }
        let git = Process()
        git.executableURL = URL(fileURLWithPath: "/usr/bin/git")
        git.arguments = ["-C", Fixtures.root, "tag", "--list", "v*"]
        let output = Pipe()
        git.standardOutput = output
        git.standardError = FileHandle.nullDevice
        guard (try? git.run()) != nil else { return }
        let tags = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        git.waitUntilExit()
        let list = tags.split(separator: "\n").map(String.init)
        // A clone made without tags has none to check; one with tags must have the version's.
        guard git.terminationStatus == 0, !list.isEmpty else { return }
        #expect(list.contains("v" + version), "no git tag v\(version) (tags: \(list))")
        for tag in list {
            #expect(changelog.contains("## [\(tag.dropFirst())]"), "the tag \(tag) has no CHANGELOG.md section")
        }
    }
}
