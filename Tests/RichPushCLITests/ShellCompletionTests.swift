import Foundation
import TestSupport
import Testing

@testable import RichPushCLI

/// The completion scripts and the manual page come from the command and option tables: every
/// option of every command is in each, the bash script completes as a user types, and groff reads
/// the page without a warning.
@Suite struct ShellCompletionTests {
    /// Runs `script` in bash with the completion script sourced; stdout.
    static func bash(_ script: String) async throws -> (status: Int32, stdout: String, stderr: String) {
        let folder = try Fixtures.temporaryFolder("richpush-completion")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(ShellCompletion.bash.utf8).write(to: URL(fileURLWithPath: folder + "/richpush.bash"))
        let run = try await ChildProcess.run(
            "/bin/bash", ["-c", "source richpush.bash && " + script], directory: folder)
        return (run.status, run.stdout, run.stderr)
    }

    /// What bash completes for the words typed so far (the last one being completed).
    static func completions(_ words: [String]) async throws -> [String] {
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let run = try await bash(
            "COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _richpush; printf '%s\\n' \"${COMPREPLY[@]}\"")
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout.split(separator: "\n").map(String.init)
    }

    @Test func bashCompletesCommandsActionsAndOptions() async throws {
        #expect(try await Self.completions(["richpush", "pro"]) == ["process"])
        #expect(try await Self.completions(["richpush", "report", "m"]) == ["merge"])
        #expect(try await Self.completions(["richpush", "process", "--bud"]) == ["--budget"])
        #expect(try await Self.completions(["richpush", "bench", "--ios-m"]) == ["--ios-mix"])
        #expect(try await Self.completions(["richpush", "report", "merge", "--ht"]) == ["--html"])
        #expect(try await Self.completions(["richpush", "completions", "z"]) == ["zsh"])
        // A value that is not a path completes nothing.
        #expect(try await Self.completions(["richpush", "bench", "--budget", ""]).filter { !$0.isEmpty }.isEmpty)
        let syntax = try await Self.bash("true")
        #expect(syntax.status == 0 && syntax.stderr.isEmpty, "\(syntax.stderr)")
    }

    /// Every spelling of every option of every command (and action) is in every script and the page.
    @Test func everyOptionIsInEveryScriptAndThePage() {
        let man = ShellCompletion.manPage(version: RichPushCommand.version)
        for context in ShellCompletion.contexts {
            for option in context.options {
                for name in option.names {
                    #expect(ShellCompletion.bash.contains(" \(name) ") || ShellCompletion.bash.contains(" \(name)\""))
                    #expect(ShellCompletion.zsh.contains("'\(name)["), "zsh lacks \(name)")
                    let fish = name.hasPrefix("--") ? "-l \(name.dropFirst(2))" : "-s \(name.dropFirst())"
                    #expect(ShellCompletion.fish.contains(fish), "fish lacks \(name)")
                    #expect(man.contains(ShellCompletion.roffName(name)), "the page lacks \(name)")
                }
            }
        }
        for command in RichPushCommand.commands {
            #expect(ShellCompletion.zsh.contains("'\(command.name):"))
            #expect(ShellCompletion.fish.contains("-a \(command.name) "))
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/groff")))
    func groffReadsThePageWithoutAWarning() async throws {
        let folder = try Fixtures.temporaryFolder("richpush-man")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(ShellCompletion.manPage(version: RichPushCommand.version).utf8).write(
            to: URL(fileURLWithPath: folder + "/richpush.1"))
        let run = try await ChildProcess.run("/usr/bin/groff", ["-ww", "-man", "-Tutf8", "-z", folder + "/richpush.1"])
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
    }

    /// zsh and fish check their scripts' syntax where they are installed.
    @Test func zshAndFishParseTheirScripts() async throws {
        for (shell, script) in [("zsh", ShellCompletion.zsh), ("fish", ShellCompletion.fish)] {
            guard let path = ["/usr/bin/" + shell, "/bin/" + shell].first(where: FileManager.default.isExecutableFile)
            else { continue }
            let folder = try Fixtures.temporaryFolder("richpush-\(shell)")
            defer { try? FileManager.default.removeItem(atPath: folder) }
            try Data(script.utf8).write(to: URL(fileURLWithPath: folder + "/script"))
            let run = try await ChildProcess.run(path, ["-n", folder + "/script"])
            #expect(run.status == 0, "\(shell): \(run.stderr)")
        }
    }

    @Test func escapingKeepsEveryShellsQuotesClosed() {
        #expect(ShellCompletion.zshQuoted("a'b[c]:d") == "a'\\''b\\[c\\]\\:d")
        #expect(ShellCompletion.fishQuoted("a'b\\c") == "a\\'b\\\\c")
        #expect(
            ShellCompletion.roff(".starts with a dot\n'and a quote\\") == "\\&.starts with a dot\n\\&'and a quote\\e")
    }
}

/// The command reference in docs/ is the binary's own help, regenerated: a stale file fails here.
@Suite struct ReferenceDocTests {
    @Test func docsReferenceIsCurrent() throws {
        let file = try String(contentsOfFile: Fixtures.root + "/docs/reference.md", encoding: .utf8)
        #expect(
            file == ShellCompletion.reference,
            "docs/reference.md is stale: run 'swift run richpush help --reference > docs/reference.md'")
        for command in RichPushCommand.commands {
            #expect(file.contains("<a id=\"\(command.name)\"></a>"))
        }
    }
}
