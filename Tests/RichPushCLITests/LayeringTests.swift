import Foundation
import TestSupport
import Testing

/// The library's three targets are layers: the core (RichPush) depends on neither of the others, and
/// the runs (RichPushRuns) and the services (RichPushServices) on the core, not on each other's top. The compiler holds a wrong-way use once the manifest
/// says so; this keeps the manifest saying so, and keeps `@_exported` out of the sources.
@Suite struct LayeringTests {
    /// The dependencies `Package.swift` declares for `target`.
    static func dependencies(of target: String) throws -> [String] {
        let manifest = try String(contentsOfFile: Fixtures.root + "/Package.swift", encoding: .utf8)
        let pattern = try NSRegularExpression(
            pattern: #"\.target\(\s*name: "\#(target)",\s*dependencies: \[([^\]]*)\]"#)
        let match = try #require(pattern.firstMatch(in: manifest, range: NSRange(manifest.startIndex..., in: manifest)))
        let list = try #require(Range(match.range(at: 1), in: manifest))
        return manifest[list].split(separator: ",").map {
            $0.trimmingCharacters(in: CharacterSet(charactersIn: " \n\""))
        }
        .filter { !$0.isEmpty }
    }

    @Test func theCoreAndTheRunsDependOnlyDownwards() throws {
        let core = try Self.dependencies(of: "RichPush")
        #expect(!core.contains("RichPushRuns") && !core.contains("RichPushServices") && !core.contains("RichPushCLI"))
        #expect(core.contains("CurlKit"))
        let runs = try Self.dependencies(of: "RichPushRuns")
        #expect(runs.contains("RichPush") && !runs.contains("RichPushServices") && !runs.contains("RichPushCLI"))
        let services = try Self.dependencies(of: "RichPushServices")
        #expect(services.contains("RichPush") && !services.contains("RichPushCLI"))
    }

    @Test func nothingIsReexported() throws {
        let walker = try #require(FileManager.default.enumerator(atPath: Fixtures.root + "/Sources"))
        var files = 0
        while let name = walker.nextObject() as? String {
            guard name.hasSuffix(".swift") else { continue }
            files += 1
            let text = try String(contentsOfFile: Fixtures.root + "/Sources/" + name, encoding: .utf8)
            #expect(!text.contains("@_exported"), "\(name) re-exports a module")
        }
        #expect(files > 100)
    }
}
