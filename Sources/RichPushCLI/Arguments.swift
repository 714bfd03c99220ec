import RichPush

/// A usage mistake: a message for stderr and exit code 64.
struct UsageError: Error, CustomStringConvertible {
    var description: String
    /// Not a mistake: a parse-only run (``Arguments/parseOnly``) reached the end of the options.
    var endOfOptions = false
    init(_ description: String) { self.description = description }
}

/// A command that could not do its work: the message for stderr and the exit code, from the one table.
struct CommandFailure: Error, CustomStringConvertible {
    var code: ExitCode
    var message: String
    init(_ code: ExitCode, _ message: String) {
        self.code = code
        self.message = message
    }
    var description: String { message }
}

/// The command line as a queue of words, checked against the options a command declares, then read.
///
/// Options take the `--name value` or `--name=value` form. ``init(_:options:)`` refuses, before
/// anything is read or started, a word that names no option the command declares (with the closest
/// one, "did you mean"), a value given to a flag, and an option without its value. Whatever is left
/// when a command has read its options must be its positional arguments.
struct Arguments {
    private var words: [String]
    /// Every spelling of every option the command declares, for "did you mean".
    private(set) var known: [String]
    /// Every spelling of each declared option, by each of its spellings: reading `--verbose` also takes `-v`.
    private var spellings: [String: [String]] = [:]

    /// Options refused with their own message, wherever they appear: a secret must never be taken
    /// from the command line, where it shows in `ps` and the shell's history.
    static let refused: [String: String] = Dictionary(
        uniqueKeysWithValues: ["--api-key", "--rest-api-key"].map {
            (
                $0,
                "the REST API key is never taken from the command line (it would show in ps and shell history): "
                    + "use --api-key-file FILE or BRAZE_REST_API_KEY"
            )
        })

    /// Words checked against `options`; a mistake is a usage error that names the word.
    init(_ words: [String], options: [Option]) throws(UsageError) {
        self.words = words
        known = options.flatMap(\.names)
        for option in options { for name in option.names { spellings[name] = option.names } }
        let declared = Dictionary(
            options.flatMap { option in option.names.map { ($0, option) } }, uniquingKeysWith: { first, _ in first })
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            guard word.hasPrefix("-"), word != "-" else { continue }
            let name = String(word.prefix(while: { $0 != "=" }))
            guard let option = declared[name] else {
                if let message = Self.refused[name] { throw UsageError(message) }
                let shown = name.escapingControlCharacters
                if let suggestion = Suggestion.closest(to: name, in: known.filter { $0.hasPrefix("--") }) {
                    throw UsageError("unknown option \(shown); did you mean \(suggestion)?")
                }
                throw UsageError("unknown option \(shown)")
            }
            if option.value == nil {
                guard name == word else { throw UsageError("\(name) takes no value") }
            } else if name == word {
                guard index < words.count else { throw UsageError("\(name) needs a value (\(option.value ?? ""))") }
                index += 1
            }
        }
    }

    /// Stop at the end of the options: ``positionals()`` throws a ``UsageError`` with
    /// ``UsageError/endOfOptions`` instead of returning, so a test can parse a command's options
    /// without running it (every command reads its positionals last, before it starts anything).
    var parseOnly = false

    /// Reads an option through its typed key: a flag is a `Bool`, a value option the last value given
    /// (nil when absent), a repeatable one every value in order, a number or a duration checked
    /// against its range. The key is the option's one declaration, so a command never spells a name.
    mutating func read<Value>(_ key: Key<Value>) throws(UsageError) -> Value {
        assert(known.contains(key.option.name), "\(key.option.name) is read but not declared by the command")
        return try key.reading(&self, key.option)
    }

    /// Removes `--name` (or an alias) and says whether it was there.
    fileprivate mutating func flag(_ names: String...) -> Bool {
        let names = spelled(names)
        var found = false
        words.removeAll { word in
            let hit = names.contains(word)
            found = found || hit
            return hit
        }
        return found
    }

    /// Removes every `--name VALUE` and returns the values in order.
    fileprivate mutating func values(_ names: String...) throws(UsageError) -> [String] {
        try values(names)
    }

    private mutating func values(_ names: [String]) throws(UsageError) -> [String] {
        let names = spelled(names)
        var result: [String] = []
        var index = 0
        while index < words.count {
            let word = words[index]
            if let name = names.first(where: { word.hasPrefix($0 + "=") }) {
                result.append(String(word.dropFirst(name.count + 1)))
                words.remove(at: index)
            } else if names.contains(word) {
                guard index + 1 < words.count else { throw UsageError("\(word) needs a value") }
                result.append(words[index + 1])
                words.removeSubrange(index...(index + 1))
            } else {
                index += 1
            }
        }
        return result
    }

    /// `names` and every other spelling their declarations give.
    private func spelled(_ names: [String]) -> [String] {
        var all: [String] = []
        for name in names { all += spellings[name] ?? [name] }
        return all
    }

    /// Removes `--name VALUE` and returns the last value given.
    fileprivate mutating func value(_ names: String...) throws(UsageError) -> String? {
        var result: [String] = []
        for name in names { result += try values([name]) }
        return result.last
    }

    /// The unit a duration option's bare number is in.
    enum DurationUnit: Double {
        case seconds = 1
        case milliseconds = 0.001

        var words: String { self == .seconds ? "seconds" : "milliseconds" }
    }

    /// Reads `--name DURATION` as a number of `unit` within `range`: a bare number is in `unit`, as it
    /// always was; `500ms`, `30s`, `2m` and `1h` (decimals allowed: `1.5s`) are what k6 and vegeta
    /// users write.
    fileprivate mutating func duration(_ name: String, in range: ClosedRange<Double>, unit: DurationUnit)
        throws(UsageError)
        -> Double?
    {
        guard let text = try value(name) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        var number = trimmed
        var scale = unit.rawValue
        if trimmed.hasSuffix("ms") {
            number = String(trimmed.dropLast(2))
            scale = 0.001
        } else if let last = trimmed.last, let seconds = ["s": 1.0, "m": 60, "h": 3600][String(last)] {
            number = String(trimmed.dropLast())
            scale = seconds
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            let parsed = Double(number), parsed.isFinite
        else {
            throw Self.durationError(name, text, range, unit)
        }
        let value = parsed * scale / unit.rawValue
        guard range.contains(value) else { throw Self.durationError(name, text, range, unit) }
        return value
    }

    private static func durationError(
        _ name: String, _ text: String, _ range: ClosedRange<Double>, _ unit: DurationUnit
    )
        -> UsageError
    {
        func shown(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }
        return UsageError(
            "\(name) takes a duration from \(shown(range.lowerBound)) to \(shown(range.upperBound)) \(unit.words) (a bare "
                + "number is \(unit.words); or with a unit: 500ms, 30s, 2m, 1h), not '\(text.escapingControlCharacters)'"
        )
    }

    /// Reads `--name N` as a number within `range`.
    fileprivate mutating func number<T: LosslessStringConvertible & Comparable>(
        _ name: String, in range: ClosedRange<T>
    ) throws(UsageError) -> T? {
        guard let text = try value(name) else { return nil }
        guard let number = T(text), range.contains(number) else {
            throw UsageError("\(name) takes a number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return number
    }

    /// The remaining words, which must all be positional.
    func positionals() throws(UsageError) -> [String] {
        if let unknown = words.first(where: { $0.hasPrefix("-") && $0 != "-" }) {
            let name = String(unknown.prefix(while: { $0 != "=" }))
            let shown = name.escapingControlCharacters
            if let suggestion = Suggestion.closest(to: name, in: known.filter { $0.hasPrefix("--") }) {
                throw UsageError("unknown option \(shown); did you mean \(suggestion)?")
            }
            throw UsageError("unknown option \(shown)")
        }
        if parseOnly {
            var end = UsageError("end of options")
            end.endOfOptions = true
            throw end
        }
        return words
    }
}

/// An option's typed key: its one declaration (name, aliases, value, help) and what reading it gives.
///
/// Every option a command reads is a key declared once, beside the others of its command or in the
/// shared table (``Keys``); its type says what ``Arguments/read(_:)`` returns, so a misspelt name or a
/// wrong type does not compile. Defaults are the library's: a key reads nil when the option is absent
/// and the help quotes the library's value.
///
/// ```swift
/// static let connectTimeout: Key<Double?> = .duration(
///     Option(.connectTimeout, "SECONDS", "Time allowed for DNS, TCP and TLS."), in: 0.001...3600, unit: .seconds)
/// let seconds = try arguments.read(Keys.connectTimeout)   // Double?
/// ```
struct Key<Value>: Sendable, Declared {
    let option: Option
    fileprivate let reading: @Sendable (inout Arguments, Option) throws(UsageError) -> Value

    /// The long name, for messages: `--budget`.
    var name: String { option.name }
}

extension Key where Value == Bool {
    /// A flag: true when given (by any of its spellings).
    static func flag(_ option: Option) -> Key<Bool> {
        precondition(option.value == nil, "\(option.name) is a flag and takes no value")
        return Key(option: option) { arguments, option in arguments.flag(option.name) }
    }
}

extension Key where Value == String? {
    /// An option with a text value: the last one given, or nil.
    static func text(_ option: Option) -> Key<String?> {
        Key(option: option) { arguments, option throws(UsageError) in try arguments.value(option.name) }
    }
}

extension Key where Value == [String] {
    /// A repeatable option: every value given, in order.
    static func list(_ option: Option) -> Key<[String]> {
        Key(option: option) { arguments, option throws(UsageError) in try arguments.values(option.name) }
    }
}

extension Key {
    /// A number within `range` (the last one given), or nil.
    static func number<T: LosslessStringConvertible & Comparable & Sendable>(_ option: Option, in range: ClosedRange<T>)
        -> Key<T?>
    where Value == T? {
        Key(option: option) { arguments, option throws(UsageError) in try arguments.number(option.name, in: range) }
    }
}

extension Key where Value == Double? {
    /// A duration within `range`, in `unit` (a bare number is in `unit`; `500ms`, `30s`, `2m`, `1h`
    /// also read), or nil.
    static func duration(_ option: Option, in range: ClosedRange<Double>, unit: Arguments.DurationUnit) -> Key<Double?>
    {
        Key(option: option) { arguments, option throws(UsageError) in
            try arguments.duration(option.name, in: range, unit: unit)
        }
    }
}
