import Foundation
import RichPush

/// The entry point: picks the subcommand, runs it, and turns every error into a message and an exit code.
@main
enum RichPushCommand {
    static let overview = """
        richpush: emulate the iOS Notification Service Extension for rich push (Braze first).

        Usage: richpush <command> [options]

        Commands:
          process [FILE]  Run one payload (stdin or FILE) through the emulated extension; mutated payload on stdout.
          batch DIR       Run a folder (or NDJSON file) of payloads, concurrently and resumably.
          bench           Reproduce a campaign's burst of downloads; report the share of devices that show it.
          report merge    Combine the JSON reports of a sharded bench.
          demo            Serve the samples and run every sample payload through the extension, as a table.
          serve [DIR]     Serve a folder of assets over HTTP and HTTPS on 127.0.0.1, with fault modes.
          fetch URL       Download one asset as a service extension would, and report how it went.
          sniff FILE...   Tell what files really are, and whether iOS would attach them.
          analytics       Record, show and flush the analytics an extension saves in its App Group.
          help [COMMAND]  Show help for a command.

        Run 'richpush help <command>' or 'richpush <command> --help' for a command's options.
        """

    static func main() async {
        // Before anything else: a Ctrl-C from now on cancels the run instead of killing it mid-write.
        occupyStandardDescriptors()
        guard ensureDescriptorHeadroom() else {
            printError(
                "richpush: too many open files: the limit (\(SystemCall.descriptorLimit)) is below the "
                    + "\(minimumDescriptors) richpush needs. Raise it with 'ulimit -n 1024' and run again.")
            exit(ExitCode.software.rawValue)
        }
        TerminationSignal.install()
        // A closed stdout must surface as a write error (exit 74), not kill the process.
        signal(SIGPIPE, SIG_IGN)
        var words = Array(CommandLine.arguments.dropFirst())
        guard let command = words.first else {
            printError(overview)
            exit(ExitCode.usage.rawValue)
        }
        words.removeFirst()
        let code: ExitCode
        do {
            code = try await run(command, words)
        } catch let error as UsageError {
            printError("richpush \(command): \(error)\nRun 'richpush \(command) --help' for usage.")
            code = .usage
        } catch {
            printError("richpush \(command): \(error)")
            code = .software
        }
        // A signal always ends a run as interrupted, even one that came as the work finished.
        if TerminationSignal.received && code != .interrupted && code != .usage {
            printError("richpush \(command): interrupted.")
            exit(ExitCode.interrupted.rawValue)
        }
        exit(code.rawValue)
    }

    static func run(_ command: String, _ words: [String]) async throws -> ExitCode {
        let wantsHelp = words.contains("--help") || words.contains("-h")
        switch command {
        case "serve":
            if wantsHelp { return help(ServeCommand.help) }
            return try ServeCommand.run(Arguments(words))
        case "process":
            if wantsHelp { return help(ProcessCommand.help) }
            return try await ProcessCommand.run(Arguments(words))
        case "batch":
            if wantsHelp { return help(BatchCommand.help) }
            return try await BatchCommand.run(Arguments(words))
        case "bench":
            if wantsHelp { return help(BenchCommand.help) }
            return try await BenchCommand.run(Arguments(words))
        case "report":
            if wantsHelp { return help(ReportCommand.help) }
            return try ReportCommand.run(Arguments(words))
        case "demo":
            if wantsHelp { return help(DemoCommand.help) }
            return try await DemoCommand.run(Arguments(words))
        case "fetch":
            if wantsHelp { return help(FetchCommand.help) }
            return try await FetchCommand.run(Arguments(words))
        case "sniff":
            if wantsHelp { return help(SniffCommand.help) }
            return try SniffCommand.run(Arguments(words))
        case "analytics": return try await AnalyticsCommand.run(words)
        case "help", "--help", "-h":
            switch words.first {
            case "process": return help(ProcessCommand.help)
            case "demo": return help(DemoCommand.help)
            case "batch": return help(BatchCommand.help)
            case "bench": return help(BenchCommand.help)
            case "report": return help(ReportCommand.help)
            case "serve": return help(ServeCommand.help)
            case "fetch": return help(FetchCommand.help)
            case "sniff": return help(SniffCommand.help)
            case "analytics": return help(AnalyticsCommand.help)
            default: return help(overview)
            }
        case "version", "--version":
            printLine("richpush 0.1.0 (\(CurlRuntimeInfo.version))")
            return .success
        default:
            throw UsageError("unknown command '\(command)'\n\n\(overview)")
        }
    }

    private static func help(_ text: String) -> ExitCode {
        printLine(text)
        return .success
    }
}
