import AssetServer
import Foundation
import RichPush

/// One command of the tool: its name, its line in the command list, its help, and how it runs.
struct Command: Sendable {
    var name: String
    /// The command with its arguments, as the command list shows it: `process [FILE]`.
    var synopsis: String
    var summary: String
    var help: String
    var run: @Sendable (Arguments) async throws -> ExitCode
}

/// The entry point: picks the subcommand, runs it, and turns every error into a message and an exit code.
@main
enum RichPushCommand {
    /// Every command, in the order the command list shows them: dispatch and help both read this table.
    static let commands: [Command] = [
        Command(
            name: "process", synopsis: "process [FILE]",
            summary: "Run one payload (stdin or FILE) through the emulated extension; mutated payload on stdout.",
            help: ProcessCommand.help, run: { try await ProcessCommand.run($0) }),
        Command(
            name: "batch", synopsis: "batch DIR",
            summary: "Run a folder (or NDJSON file) of payloads, concurrently and resumably.",
            help: BatchCommand.help, run: { try await BatchCommand.run($0) }),
        Command(
            name: "bench", synopsis: "bench",
            summary: "Reproduce a campaign's burst of downloads; report the share of devices that show it.",
            help: BenchCommand.help, run: { try await BenchCommand.run($0) }),
        Command(
            name: "report", synopsis: "report merge", summary: "Combine the JSON reports of a sharded bench.",
            help: ReportCommand.help, run: { try ReportCommand.run($0) }),
        Command(
            name: "demo", synopsis: "demo",
            summary: "Serve the samples and run every sample payload through the extension, as a table.",
            help: DemoCommand.help, run: { try await DemoCommand.run($0) }),
        Command(
            name: "serve", synopsis: "serve [DIR]",
            summary: "Serve a folder of assets over HTTP and HTTPS on 127.0.0.1, with fault modes.",
            help: ServeCommand.help, run: { try ServeCommand.run($0) }),
        Command(
            name: "fetch", synopsis: "fetch URL",
            summary: "Download one asset as a service extension would, and report how it went.",
            help: FetchCommand.help, run: { try await FetchCommand.run($0) }),
        Command(
            name: "sniff", synopsis: "sniff FILE...",
            summary: "Tell what files really are, and whether iOS would attach them.",
            help: SniffCommand.help, run: { try SniffCommand.run($0) }),
        Command(
            name: "network", synopsis: "network list",
            summary: "Show the network profiles downloads can be shaped with.",
            help: NetworkCommand.help, run: { try NetworkCommand.run($0) }),
        Command(
            name: "analytics", synopsis: "analytics",
            summary: "Record, show and flush the analytics an extension saves in its App Group.",
            help: AnalyticsCommand.help, run: { try await AnalyticsCommand.run($0.remainingWords) }),
    ]

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

        Run 'richpush help <command>' or 'richpush <command> --help' for a command's options.

        \(ExitCode.helpTable)
        """
    }

    static func main() async {
        // Before anything else: a Ctrl-C from now on cancels the run instead of killing it mid-write.
        occupyStandardDescriptors()
        guard ensureDescriptorHeadroom() else {
            printError(
                "richpush: too many open files: the limit (\(SystemCall.descriptorLimit)) is below the "
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
        let code: ExitCode
        do {
            code = try await run(name, words)
        } catch let error as UsageError {
            printError("richpush \(name): \(error)\nRun 'richpush \(name) --help' for usage.")
            code = .usage
        } catch let error as SetupError where error.pointsToHelp {
            printError("richpush \(name): \(error.message)\nRun 'richpush \(name) --help' for usage.")
            code = error.code
        } catch {
            let failure = failure(for: error)
            printError("richpush \(name): \(failure.message)")
            code = failure.code
        }
        // A signal always ends a run as interrupted, even one that came as the work finished.
        if TerminationSignal.received && code != .interrupted && code != .usage {
            printError("richpush \(name): interrupted.")
            exit(ExitCode.interrupted.rawValue)
        }
        exit(code.rawValue)
    }

    /// Runs the command `name` with the words after it.
    static func run(_ name: String, _ words: [String]) async throws -> ExitCode {
        let wantsHelp = words.contains("--help") || words.contains("-h")
        if let command = commands.first(where: { $0.name == name }) {
            if wantsHelp { return help(command) }
            return try await command.run(Arguments(words))
        }
        switch name {
        case "help", "--help", "-h":
            guard let topic = words.first else { return show(overview) }
            guard let command = commands.first(where: { $0.name == topic }) else {
                throw unknownCommand(topic)
            }
            return help(command)
        case "version", "--version":
            printLine("richpush 0.1.0 (\(CurlRuntimeInfo.version))")
            return .success
        default:
            throw unknownCommand(name)
        }
    }

    /// An unknown command: the closest command's name, and the list.
    static func unknownCommand(_ name: String) -> CommandFailure {
        let shown = name.escapingControlCharacters
        let guess = Suggestion.closest(to: name, in: commands.map(\.name)).map { " Did you mean '\($0)'?" } ?? ""
        return CommandFailure(.usage, "unknown command '\(shown)'.\(guess)\n\n\(commandList)")
    }

    /// Every error a command lets through, as a message without library jargon and a code from the table.
    static func failure(for error: Error) -> CommandFailure {
        switch error {
        case let failure as CommandFailure: return failure
        case let error as SetupError: return CommandFailure(error.code, error.message)
        case let error as SystemError: return CommandFailure(.ioError, error.message)
        case let error as StoreError: return CommandFailure(.ioError, error.message)
        case let error as BatchInputError: return CommandFailure(.dataError, error.message)
        case let error as SniffError: return CommandFailure(.dataError, error.message)
        case let error as SampleExpectationsError: return CommandFailure(.dataError, "\(error); fix that file.")
        case let error as AssetServerError: return CommandFailure(.unavailable, error.message)
        case let error as FetchError: return CommandFailure(.unavailable, error.engineStartMessage)
        case let error as AnalyticsError:
            return CommandFailure(AnalyticsExit.code(for: .failed(error.code)), error.message)
        case let error as CocoaError:
            let path = (error.userInfo[NSFilePathErrorKey] as? String).map { " '\($0.escapingControlCharacters)'" }
            let underlying = (error.userInfo[NSUnderlyingErrorKey] as? NSError).map {
                String(cString: strerror(Int32($0.code)))
            }
            let reason = underlying ?? (error.isFileError ? "no such file, or no permission" : "unusable data")
            let code: ExitCode = error.code.rawValue >= 512 && error.code.rawValue < 1024 ? .ioError : .dataError
            return CommandFailure(
                code, "cannot \(code == .ioError ? "write" : "read")\(path ?? " the input"): \(reason). Check the path."
            )
        case is DecodingError:
            return CommandFailure(.dataError, "the input is not the JSON richpush expects; check the file.")
        case is EncodingError:
            return CommandFailure(.software, "cannot encode the output as JSON (please report it).")
        default:
            return CommandFailure(.software, "internal error (please report it): \(type(of: error))")
        }
    }

    /// Prints a command's help, followed by the exit-code table every command shares.
    private static func help(_ command: Command) -> ExitCode {
        show(command.help + "\n\n" + ExitCode.helpTable)
    }

    private static func show(_ text: String) -> ExitCode {
        printLine(text)
        return .success
    }
}
