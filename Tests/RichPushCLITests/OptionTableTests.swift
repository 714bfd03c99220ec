import Foundation
import RichPush
import TestSupport
import Testing

@testable import RichPushCLI

/// The one option table: every option of every command parses (its parser takes it), every help is
/// generated from the table, every option the README shows exists, and every setting the library
/// names is an option.
@Suite struct OptionTableTests {
    /// Every command with its full name (`analytics flush`), subcommands included.
    static var everyCommand: [(path: String, command: Command)] {
        RichPushCommand.commands.flatMap { command in
            [(command.name, command)] + command.subcommands.map { ("\(command.name) \($0.name)", $0) }
        }.filter { $0.command.run != nil }
    }

    /// Files the examples name, made in `folder`.
    static func fixtures(in folder: String) throws -> [String: String] {
        let key = folder + "/key.txt"
        try Data("test-key\n".utf8).write(to: URL(fileURLWithPath: key))
        let group = folder + "/group"
        try FileManager.default.createDirectory(
            atPath: group + "/Library/Preferences", withIntermediateDirectories: true)
        try Data(
            #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict/></plist>"#.utf8
        ).write(to: URL(fileURLWithPath: group + "/Library/Preferences/group.com.example.plist"))
        let audience = folder + "/audience.txt"
        try Data("17=75\n16=25  # older phones\n".utf8).write(to: URL(fileURLWithPath: audience))
        return ["key.txt": key, "Samples/app-group": group, "audience.txt": audience]
    }

    /// What a command needs besides the option under test for its parser to reach its end.
    static func base(_ path: String, fixtures: [String: String]) -> [String] {
        let group = fixtures["Samples/app-group"] ?? ""
        switch path {
        case "batch": return ["--out", "out"]
        case "bench": return ["--devices", "1"]
        case "analytics record", "analytics show": return ["--app-group", group]
        case "analytics flush":
            return ["--app-group", group, "--endpoint", "http://127.0.0.1:9", "--external-id", "u1"]
        default: return []
        }
    }

    /// Options that only parse beside another (their parser says so with a usage error otherwise).
    static func companions(_ name: String, in path: String, fixtures: [String: String]) -> [String] {
        switch (path, name) {
        case (_, "--require-key"): return ["--app", Fixtures.root + "/Samples/app"]
        case (_, "--track-event") where path != "serve" && path != "analytics flush",
            (_, "--api-key-file") where path != "serve" && path != "analytics flush":
            return ["--track-endpoint", "http://127.0.0.1:9/"]
        case ("serve", "--track-log"), ("serve", "--track-limit"): return ["--api-key-file", fixtures["key.txt"] ?? ""]
        case (_, "--property"): return ["--event", "opened"]
        case ("serve", "--edge-capacity"), ("serve", "--edge-fill"): return ["--edge"]
        case ("bench", "--edge"): return ["--serve", Fixtures.assets]
        case ("bench", "--edge-capacity"), ("bench", "--edge-fill"): return ["--serve", Fixtures.assets, "--edge"]
        case ("analytics flush", "--external-id"), ("analytics flush", "--braze-id"): return []
        default: return []
        }
    }

    /// An example value, with the repository's and the fixtures' paths made absolute.
    static func value(of option: Option, fixtures: [String: String]) -> String? {
        guard let example = option.example else { return nil }
        if let made = fixtures[example] { return made }
        return example.hasPrefix("Samples/") ? Fixtures.root + "/" + example : example
    }

    @Test func everyOptionOfEveryCommandParses() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fixtures = try Self.fixtures(in: folder)
        // The delivery-tracking options read the key from the environment when no file is given.
        setenv("BRAZE_REST_API_KEY", "test-key", 1)
        var checked = 0
        for (path, command) in Self.everyCommand {
            for option in command.allOptions {
                guard let run = command.run else { continue }
                for spelling in option.names {
                    var words = Self.base(path, fixtures: fixtures)
                    if path == "analytics flush" && (option.name == "--external-id" || option.name == "--braze-id") {
                        words = Array(words.dropLast(2))
                    }
                    words += Self.companions(option.name, in: path, fixtures: fixtures)
                    words.append(spelling)
                    if option.value != nil {
                        let value = Self.value(of: option, fixtures: fixtures)
                        #expect(value != nil, "\(path) \(option.name) declares no example value")
                        words.append(value ?? "")
                    }
                    var arguments = try Arguments(words, options: command.allOptions)
                    arguments.parseOnly = true
                    do {
                        _ = try await run(arguments)
                        Issue.record("\(path) \(words) ran past its options")
                    } catch let error as UsageError where error.endOfOptions {
                        checked += 1
                    } catch {
                        Issue.record("\(path) \(words.joined(separator: " ")): \(error)")
                    }
                }
            }
        }
        #expect(checked > 150)
    }

    @Test func everyHelpIsGeneratedFromTheTable() {
        for (path, command) in Self.everyCommand {
            let help = command.helpText
            for option in command.allOptions {
                #expect(help.contains("  " + option.signature), "\(path)'s help lacks \(option.signature)")
            }
            #expect(help.components(separatedBy: "Exit status").count == 2, "\(path) prints the exit table once")
            for line in help.split(separator: "\n") where line.hasPrefix("  -") {
                let name = String(line.dropFirst(2).prefix { $0 != " " && $0 != "," })
                #expect(
                    command.allOptions.contains { $0.names.contains(name) },
                    "\(path)'s help shows \(name), not declared")
            }
        }
    }

    /// The registry builds a command only when asked for it; each name it files a command under is
    /// that command's own, once.
    @Test func theRegistryNamesEachCommandByItsName() {
        let names = RichPushCommand.registry.map(\.name)
        #expect(Set(names).count == names.count)
        for (name, command) in RichPushCommand.registry {
            #expect(command().name == name)
            #expect(RichPushCommand.command(named: name)?.name == name)
        }
        #expect(RichPushCommand.command(named: "frob") == nil)
    }

    @Test func noCommandDeclaresAnOptionTwice() {
        for (path, command) in Self.everyCommand {
            let names = command.allOptions.flatMap(\.names)
            #expect(Set(names).count == names.count, "\(path) declares \(names.sorted()) with a repeat")
        }
    }

    /// Commands read options only through typed keys (the string readers are private to `Arguments`),
    /// so a name is spelled in a message or a help text alone: each `--name` the command line's
    /// sources write is one some command declares (or a word of the top level: `--version`, `help --man`).
    @Test func everyOptionNameTheSourcesWriteIsDeclared() throws {
        let declared = Set(Self.everyCommand.flatMap { $0.command.allOptions.flatMap(\.names) })
        let topLevel: Set<String> = ["--help", "--version", "--man", "--reference"]
        let refused = Set(Arguments.refused.keys)
        // Placeholders of doc comments: `--name VALUE`, and Suggestion's example of a typo.
        let placeholders: Set<String> = ["--name", "--budgte"]
        let folder = Fixtures.root + "/Sources/RichPushCLI"
        var checked = 0
        for file in try FileManager.default.contentsOfDirectory(atPath: folder) where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            let regex = try NSRegularExpression(pattern: "(?<![\\w-])--[a-z][a-z0-9-]*")
            for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let range = Range(match.range, in: text) else { continue }
                let name = String(text[range])
                checked += 1
                #expect(
                    declared.contains(name) || topLevel.contains(name) || refused.contains(name)
                        || placeholders.contains(name),
                    "\(file) writes \(name), which no command declares")
            }
        }
        #expect(checked > 200)
    }

    @Test func everySettingTheLibraryNamesIsAnOption() {
        let declared = Set(Self.everyCommand.flatMap { $0.command.allOptions.flatMap(\.names) })
        for setting in Setting.allCases {
            #expect(declared.contains(Command.spelling(setting)), "\(setting.rawValue) is spelled as no option")
        }
    }

    /// Every `--option` the README and the guide show after `richpush COMMAND` is one that command
    /// declares.
    @Test func everyOptionTheDocsShowExists() throws {
        let readme = try ["README.md", "docs/guide.md", "docs/internals.md"].map {
            try String(contentsOfFile: Fixtures.root + "/" + $0, encoding: .utf8)
        }.joined(separator: "\n")
        // Shell lines continue with a trailing backslash.
        let lines = readme.replacingOccurrences(of: "\\\n", with: " ").split(separator: "\n").map(String.init)
        let commands = Dictionary(uniqueKeysWithValues: Self.everyCommand.map { ($0.path, $0.command) })
        var checked = 0
        for line in lines {
            for invocation in line.components(separatedBy: "richpush ").dropFirst() {
                let words = invocation.split(separator: " ").map(String.init)
                guard let first = words.first else { continue }
                let twoWords = words.count > 1 ? first + " " + words[1] : first
                guard let command = commands[twoWords] ?? commands[first] else { continue }
                // Up to the end of this invocation: a pipe, a `;`, a closing quote or backtick.
                for word in words.dropFirst() {
                    if word.hasPrefix("|") || word.hasPrefix(";") || word.hasPrefix("&&") || word.contains("`") {
                        break
                    }
                    guard word.hasPrefix("--") || (word.hasPrefix("-") && word.count == 2 && word != "--") else {
                        continue
                    }
                    let name = String(word.prefix { $0 != "=" && $0 != ")" && $0 != "," && $0 != "]" })
                    if name == "--help" || name == "-h" { continue }
                    #expect(
                        command.allOptions.contains { $0.names.contains(name) },
                        "docs: 'richpush \(twoWords) ... \(name)' is no option of that command")
                    checked += 1
                }
            }
        }
        #expect(checked > 30)
    }

    /// The reference's option tables are the table's own rendering.
    @Test func theReferencesOptionTablesComeFromTheTable() throws {
        let reference = try String(contentsOfFile: Fixtures.root + "/docs/reference.md", encoding: .utf8)
        for group in OptionGroup.shared {
            #expect(reference.contains(group.markdown), "docs/reference.md lacks the table of \(group.title)")
        }
    }

    /// Every release build the README and the docs show names the product: without `--product`, SwiftPM
    /// also builds the test support target, which imports Testing, a module the static standard library
    /// has no build of (`swift build -c release --static-swift-stdlib` alone fails).
    @Test func everyReleaseBuildTheDocsShowNamesTheProduct() throws {
        var texts = [try String(contentsOfFile: Fixtures.root + "/README.md", encoding: .utf8)]
        for name in try FileManager.default.contentsOfDirectory(atPath: Fixtures.root + "/docs")
        where name.hasSuffix(".md") {
            texts.append(try String(contentsOfFile: Fixtures.root + "/docs/" + name, encoding: .utf8))
        }
        var builds = 0
        for text in texts {
            for line in text.split(separator: "\n") where line.contains("swift build -c release") {
                builds += 1
                #expect(line.contains("--product"), "a release build without --product: \(line)")
            }
        }
        #expect(builds >= 2)
    }

    @Test func anUndeclaredOptionIsRefusedBeforeAnythingRuns() throws {
        let options = ProcessCommand.command.allOptions
        #expect(throws: UsageError.self) { _ = try Arguments(["--budgte", "3"], options: options) }
        do {
            _ = try Arguments(["--budgte", "3"], options: options)
        } catch {
            #expect(error.description == "unknown option --budgte; did you mean --budget?")
        }
        do {
            _ = try Arguments(["--reuse=yes"], options: DownloadsFixture.options)
        } catch {
            #expect(error.description == "--reuse takes no value")
        }
        do {
            _ = try Arguments(["--budget"], options: options)
        } catch {
            #expect(error.description == "--budget needs a value (SECONDS)")
        }
        do {
            _ = try Arguments(["--api-key=secret"], options: options)
        } catch {
            #expect(error.description.hasPrefix("the REST API key is never taken from the command line"))
            #expect(!error.description.contains("secret"))
        }
        // An alias is read with its option.
        var quiet = try Arguments(["-q"], options: options)
        let given = try quiet.read(ProcessCommand.quiet)
        #expect(given)
        #expect(try quiet.positionals().isEmpty)
    }
}

private enum DownloadsFixture {
    static let options = OptionGroup.download.options
}
