import RichPush

/// The exit status of every richpush command: one table, in `--help` and in the README.
///
/// Codes follow sysexits(3) where one fits. A threshold that is not met (`--fail-under`, and any
/// latency threshold) is a failed check: exit 1, like a verdict that would not show.
///
/// ```swift
/// exit(ExitCode.ioError.rawValue)
/// ```
package enum ExitCode: Int32, CaseIterable, Sendable {
    case success = 0
    case failure = 1
    case usage = 64
    case dataError = 65
    case unavailable = 69
    case software = 70
    case ioError = 74
    /// Stopped by SIGINT or SIGTERM (128 + SIGINT, as shells report it).
    case interrupted = 130

    /// What the code means, in a few words.
    package var meaning: String {
        switch self {
        case .success: "success"
        case .failure: "a verdict or check failed (an attachment would not show, a threshold was not met)"
        case .usage: "usage error: an unknown command or option, a missing or malformed value"
        case .dataError: "unusable input: a missing input file or folder, a payload APNs would refuse"
        case .unavailable: "could not start: a server, the download engine, or too few open files (ulimit -n)"
        case .software: "internal error in richpush (please report it)"
        case .ioError: "an output cannot be written (a missing folder, no permission, a full disk, in use)"
        case .interrupted: "interrupted by Ctrl-C or SIGTERM (no partial file is left)"
        }
    }

    /// The table as `--help` prints it.
    package static var helpTable: String { helpTable(notes: [:]) }

    /// The table with a command's own words for some codes (what 1 means for `sniff`).
    static func helpTable(notes: [ExitCode: String]) -> String {
        "Exit status:\n"
            + allCases.map { code in
                let number = String(code.rawValue)
                let text = notes[code] ?? code.meaning
                let lines = OptionGroup.wrap(text, width: OptionGroup.width - 7)
                return "  " + number + String(repeating: " ", count: 5 - number.count)
                    + lines.joined(separator: "\n       ")
            }.joined(separator: "\n")
    }
}
