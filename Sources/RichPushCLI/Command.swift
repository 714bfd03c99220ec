import RichPush

/// One command of the tool, declared once: its name, its line in the command list, what it does,
/// the options it takes (its own and the shared groups), its subcommands, and how it runs.
///
/// Its `--help` is generated from the declaration: the prose, every option group as the table
/// declares it, the examples, and the exit-status table with what each status means for it.
struct Command: Sendable {
    var name: String
    /// The command with its arguments, as the command list shows it: `process [FILE]`.
    var synopsis: String
    var summary: String
    /// What it does, with its usage lines: the help's first part.
    var about: String
    /// Its own options first ("Options"), then the shared groups it takes.
    var options: [OptionGroup] = []
    /// Examples and notes, after the options.
    var footer: String = ""
    /// What an exit status means for this command, where the shared table's words are not enough.
    var exitNotes: [ExitCode: String] = [:]
    /// `analytics record|show|flush`, `report merge`, `network list`: each its own command.
    var subcommands: [Command] = []
    /// The work, given the command's words checked against its options.
    var run: (@Sendable (Arguments) async throws -> ExitCode)?

    /// Every option the command takes.
    var allOptions: [Option] { options.flatMap(\.options) }

    /// The whole `--help` text.
    var helpText: String {
        var parts = [about]
        if !subcommands.isEmpty {
            let width = subcommands.map(\.synopsis.count).max() ?? 0
            parts.append(
                "Actions:\n"
                    + subcommands.map {
                        "  " + $0.synopsis.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.summary
                    }.joined(separator: "\n") + "\nRun 'richpush \(name) ACTION --help' for an action's options.")
        }
        parts += options.filter { !$0.options.isEmpty }.map(\.help)
        if !footer.isEmpty { parts.append(footer) }
        parts.append(ExitCode.helpTable(notes: exitNotes))
        return parts.joined(separator: "\n\n")
    }

    /// Runs the command with the words after its name: a subcommand, the help, or the work.
    func dispatch(_ words: [String]) async throws -> ExitCode {
        if !subcommands.isEmpty, let first = words.first, !first.hasPrefix("-") {
            guard let sub = subcommands.first(where: { $0.name == first }) else {
                let names = subcommands.map(\.name)
                let guess = Suggestion.closest(to: first, in: names).map { "; did you mean '\($0)'?" } ?? ""
                throw UsageError(
                    "unknown \(name) action '\(first.escapingControlCharacters)'\(guess) (use "
                        + names.joined(separator: ", ") + ")")
            }
            return try await sub.dispatch(Array(words.dropFirst()))
        }
        if words.contains("--help") || words.contains("-h") { return RichPushCommand.show(helpText) }
        guard let run else {
            throw UsageError(
                "\(name) needs an action: " + subcommands.map(\.name).joined(separator: ", "))
        }
        // Checked before anything is read or started: an unknown option stops the command here.
        return try await run(try Arguments(words, options: allOptions))
    }

    /// How the library's settings are spelled on this command line: `--concurrency`.
    static let spelling: @Sendable (Setting) -> String = { "--" + $0.rawValue }
}
