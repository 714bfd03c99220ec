import Foundation
import POSIXKit
import Testing

/// The POSIX layer is the only one: no Swift file outside `Sources/POSIXKit` turns an errno into
/// words itself (`strerror`; libcurl's own `curl_easy_strerror` is not errno's), retries `EINTR` by
/// hand, or reads `RLIMIT_NOFILE`. Comments count too: a comment that names them describes code
/// that belongs in POSIXKit.
@Suite struct SourcePolicyTests {
    /// What is checked, and where each rule's one home is.
    static let rules: [(name: String, matches: @Sendable (Substring) -> Bool)] = [
        (
            "strerror(",
            { line in line.ranges(of: "strerror(").contains { !line[..<$0.lowerBound].hasSuffix("curl_easy_") } }
        ),
        ("EINTR", { $0.contains("EINTR") }),
        ("RLIMIT_NOFILE", { $0.contains("RLIMIT_NOFILE") }),
    ]

    /// `file:line: rule` for every line of a Swift file under `root` (outside `root/POSIXKit`) that breaks a rule.
    static func violations(under root: String) throws -> [String] {
        var found: [String] = []
        let walker = try #require(FileManager.default.enumerator(atPath: root))
        while let relative = walker.nextObject() as? String {
            guard relative.hasSuffix(".swift"), !relative.hasPrefix("POSIXKit/") else { continue }
            let text = try String(contentsOfFile: root + "/" + relative, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                for rule in rules where rule.matches(line) { found.append("\(relative):\(number + 1): \(rule.name)") }
            }
        }
        return found.sorted()
    }

    /// The repository's `Sources`, found from this file (`Tests/POSIXKitTests/...`); `SOURCE_POLICY_ROOT`
    /// checks another tree instead (an older checkout, to see the rule fail).
    static var sources: String {
        if let root = ProcessInfo.processInfo.environment["SOURCE_POLICY_ROOT"], !root.isEmpty { return root }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources").path
    }

    @Test func onlyPOSIXKitTurnsErrnoIntoWordsRetriesEINTRAndReadsTheDescriptorLimit() throws {
        let root = Self.sources
        #expect(FileManager.default.fileExists(atPath: root + "/POSIXKit/SystemCall.swift"), "\(root)")
        let found = try Self.violations(under: root)
        #expect(
            found.isEmpty,
            "move these into POSIXKit (SystemCall, SystemError, DescriptorBudget):\n\(found.joined(separator: "\n"))")
    }

    @Test func theCheckFindsEachRuleAndSparesPOSIXKitAndCurl() throws {
        let root = NSTemporaryDirectory() + "richpush-policy-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/POSIXKit", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/Other", withIntermediateDirectories: true)
        let offending = """
            let a = String(cString: strerror(errno))
            let b = String(cString: curl_easy_strerror(code))
            if errno == EINTR { continue }
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            """
        try offending.write(toFile: root + "/Other/Loop.swift", atomically: true, encoding: .utf8)
        try offending.write(toFile: root + "/POSIXKit/SystemCall.swift", atomically: true, encoding: .utf8)
        try offending.write(toFile: root + "/Other/notes.md", atomically: true, encoding: .utf8)
        #expect(
            try Self.violations(under: root) == [
                "Other/Loop.swift:1: strerror(", "Other/Loop.swift:3: EINTR", "Other/Loop.swift:4: RLIMIT_NOFILE",
            ])
    }
}
