import RichPush

/// One option of the command line, declared once: its names, its value and its help.
///
/// Parsing and every `--help` come from these declarations: a command lists the options (and shared
/// groups) it takes, ``Arguments`` refuses any other, and the help prints them as declared. Each is
/// declared inside the typed ``Key`` commands read it through; an option that sets a library
/// ``Setting`` takes its name from it, and a default the help quotes is the library's value.
///
/// ```swift
/// static let maxRedirects: Key<Int?> = .number(
///     Option(.maxRedirects, "N", "Redirects followed at most (default \(FetchPolicy().maxRedirects))."), in: 0...50)
/// ```
struct Option: Sendable, Hashable, Declared {
    /// The long name, `--budget`.
    var name: String
    /// Other spellings (`-o`, `-r`).
    var aliases: [String]
    /// The value's name in help (`SECONDS`); nil for a flag.
    var value: String?
    /// What it does and its default, as one paragraph (wrapped when printed).
    var help: String
    /// A value the option accepts, for the table's own tests (flags have none).
    var example: String?

    init(_ name: String, _ value: String? = nil, _ help: String, aliases: [String] = [], example: String? = nil) {
        self.name = name
        self.aliases = aliases
        self.value = value
        self.help = help
        self.example = example
    }

    /// An option that sets one of the library's ``Setting``s: its name is the setting's, spelled as
    /// the command line spells every setting (``Command/spelling``), so messages the library writes
    /// name the option the user typed.
    init(_ setting: Setting, _ value: String? = nil, _ help: String, aliases: [String] = [], example: String? = nil) {
        self.init(Command.spelling(setting), value, help, aliases: aliases, example: example)
    }

    var option: Option { self }

    /// Every spelling: the long name and the aliases.
    var names: [String] { [name] + aliases }

    /// The left column of its help line: `-o, --output FILE`.
    var signature: String {
        (aliases + [name]).joined(separator: ", ") + (value.map { " " + $0 } ?? "")
    }
}

/// What declares an option: an ``Option`` itself, or the typed ``Key`` a command reads it through.
protocol Declared: Sendable {
    var option: Option { get }
}

/// A titled set of options: a command's own, or a group several commands share (download, app, ...).
struct OptionGroup: Sendable {
    var title: String
    var options: [Option]

    init(_ title: String, _ options: [any Declared]) {
        self.title = title
        self.options = options.map(\.option)
    }

    /// The group as help prints it: the title, then one entry per option, its text wrapped at 100 columns.
    var help: String {
        ([title + ":"] + options.map(Self.entry)).joined(separator: "\n")
    }

    /// The column where option texts start.
    static let textColumn = 26
    static let width = 100

    static func entry(_ option: Option) -> String {
        let left = "  " + option.signature
        let lines = wrap(option.help, width: width - textColumn)
        let indent = String(repeating: " ", count: textColumn)
        var first: String
        var rest = lines.dropFirst()
        if left.count + 2 <= textColumn {
            first = left.padding(toLength: textColumn, withPad: " ", startingAt: 0) + (lines.first ?? "")
        } else {
            first = left
            rest = lines[...]
        }
        return ([first] + rest.map { indent + $0 }).joined(separator: "\n")
    }

    /// Words filled into lines of at most `width` characters (a longer word gets a line of its own).
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    /// The group as a Markdown table, as `docs/reference.md` shows it.
    var markdown: String {
        (["| option | meaning |", "|---|---|"]
            + options.map { option in
                "| `\(option.signature)` | \(option.help.replacingOccurrences(of: "|", with: "\\|")) |"
            }).joined(separator: "\n")
    }
}
