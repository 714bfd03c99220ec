import AssetServer
import Foundation
import POSIXKit
import RichPush

/// The `richpush` command line: parses the process's arguments, runs the command and exits with its
/// status. The executable's only call into this module.
public func richpushMain() async -> Never {
    await RichPushCommand.main()
}

/// The entry point: picks the subcommand, runs it, and turns every error into a message and an exit code.
package enum RichPushCommand {
    /// Every command by name, in the order the command list shows them: dispatch and help both read
    /// this table. A command's declaration (its help, its option table) is built when first asked
    /// for, so a run builds its own command's and no other (a tenth of a millisecond each).
    static let registry: [(name: String, command: @Sendable () -> Command)] = [
        ("process", { ProcessCommand.command }), ("compose", { ComposeCommand.command }),
        ("batch", { BatchCommand.command }), ("bench", { BenchCommand.command }),
        ("report", { ReportCommand.command }), ("demo", { DemoCommand.command }),
        ("serve", { ServeCommand.command }), ("fetch", { FetchCommand.command }),
        ("sniff", { SniffCommand.command }), ("network", { NetworkCommand.command }),
        ("analytics", { AnalyticsCommand.command }), ("sdk", { SDKCommand.command }),
    ]

    /// Every command, in the command list's order.
    static var commands: [Command] { registry.map { $0.command() } }

    /// The command called `name`, if there is one.
    static func command(named name: String) -> Command? {
        registry.first { $0.name == name }?.command()
    }

    /// The command list: what `richpush` alone, `richpush help` and an unknown command print.
    static var commandList: String {
        let width = commands.map(\.synopsis.count).max() ?? 0
        let rows = commands.map {
            "  " + $0.synopsis.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.summary
        }
        return "Commands:\n" + rows.joined(separator: "\n") + "\n  "
            + "help [COMMAND]".padding(toLength: width + 2, withPad: " ", startingAt: 0) + "Show help for a command."
    }

    static var overview: String {
        """
        richpush: emulate the iOS Notification Service Extension for rich push (Braze first).

        Usage: richpush <command> [options]

        \(commandList)

        Run 'richpush help <command>' or 'richpush <command> --help' for a command's options;
        'richpush help options' prints the option groups commands share, as docs/reference.md's tables;
        'richpush --version' (or -V) prints the version and libcurl's; 'richpush completions bash|zsh|fish'
        prints a shell completion script and 'richpush help --man' the manual page, both from the option table.

        \(ExitCode.helpTable)
        """
    }

    /// Runs the process: the command named by the first argument, then exits with its status.
    package static func main() async -> Never {
        // Before anything else: a Ctrl-C from now on cancels the run instead of killing it mid-write.
        occupyStandardDescriptors()
        // The library's messages name settings as this command line spells them.
        Setting.spelling = Command.spelling
        guard ensureDescriptorHeadroom() else {
            printError(
                "richpush: too many open files: the limit (\(DescriptorBudget.softLimitText)) is below the "
                    + "\(minimumDescriptors) richpush needs. Raise it with 'ulimit -n 1024' and run again.")
            exit(ExitCode.unavailable.rawValue)
        }
        TerminationSignal.install()
        // A closed stdout must surface as a write error (exit 74), not kill the process.
        signal(SIGPIPE, SIG_IGN)
        var words = Array(CommandLine.arguments.dropFirst())
        guard let name = words.first else {
            printError(overview)
            exit(ExitCode.usage.rawValue)
        }
        words.removeFirst()
        let shown = displayName(name, words).escapingControlCharacters
        // A command's own help for a command's usage error; the overview for a word that is no command.
        let usage =
            registry.contains { $0.name == name }
            ? "\nRun 'richpush \(shown) --help' for usage." : "\nRun 'richpush --help' for usage."
        let code: ExitCode
        do {
            code = try await run(name, words)
        } catch let error as UsageError {
            printError("richpush \(shown): \(error)" + usage)
            code = .usage
        } catch {
            let failure = ExitStatus.failure(for: error)
            let help = failure.code == .usage ? usage : ""
            printError("richpush \(shown): \(failure.message)" + help)
            code = failure.code
        }
        // A signal always ends a run as interrupted, even one that came as the work finished.
        if TerminationSignal.received && code != .interrupted && code != .usage {
            printError("richpush \(shown): interrupted.")
            exit(ExitCode.interrupted.rawValue)
        }
        exit(code.rawValue)
    }

    /// Runs the command `name` with the words after it: its subcommand when it has them, its help
    /// for `--help` or `-h`, else its options checked against its table, then its work.
    static func run(_ name: String, _ words: [String]) async throws -> ExitCode {
        if let command = command(named: name) {
            return try await command.dispatch(words)
        }
        switch name {
        case "help", "--help", "-h":
            guard let topic = words.first else { return show(overview) }
            if topic == "options" { return show(OptionGroup.sharedMarkdown) }
            if topic == "--man" { return show(ShellCompletion.manPage(version: version)) }
            if topic == "--reference" {
                print(ShellCompletion.reference, terminator: "")
                fflush(nil)
                return .success
            }
            guard var command = command(named: topic) else {
                throw unknownCommand(topic)
            }
            if let action = words.dropFirst().first, let sub = command.subcommands.first(where: { $0.name == action }) {
                command = sub
            }
            return show(command.helpText)
        case "completions":
            guard words.count == 1, let script = ShellCompletion.script(for: words[0]) else {
                throw UsageError(
                    "completions takes one shell: " + ShellCompletion.shells.joined(separator: ", ")
                        + " (for example: richpush completions bash > ~/.local/share/bash-completion/completions/richpush)"
                )
            }
            print(script, terminator: "")
            fflush(nil)
            return .success
        case "version", "--version", "-V":
            printLine("richpush \(version) (\(CurlRuntimeInfo.version))")
            return .success
        default:
            throw unknownCommand(name)
        }
    }

    /// The command as messages name it: `analytics flush`, not `analytics`.
    static func displayName(_ name: String, _ words: [String]) -> String {
        guard let command = command(named: name), let action = words.first,
            command.subcommands.contains(where: { $0.name == action })
        else { return name }
        return name + " " + action
    }

    /// richpush's version, as `richpush --version` prints it.
    static let version = "0.2.0"

    /// An unknown command: the closest command's name, and the list.
    static func unknownCommand(_ name: String) -> CommandFailure {
        let shown = name.escapingControlCharacters
        let guess = Suggestion.closest(to: name, in: registry.map(\.name)).map { " Did you mean '\($0)'?" } ?? ""
        return CommandFailure(.usage, "unknown command '\(shown)'.\(guess)\n\n\(commandList)")
    }

    static func show(_ text: String) -> ExitCode {
        printLine(text)
        return .success
    }
}
