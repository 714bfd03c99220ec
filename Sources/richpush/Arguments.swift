import RichPush

/// A usage mistake: a message for stderr and exit code 64.
struct UsageError: Error, CustomStringConvertible {
    var description: String
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

/// The command line as a queue of words, read by the options a command knows.
///
/// Options take the `--name value` or `--name=value` form. Whatever is left when a command has
/// read its options must be its positional arguments; an unknown `--option` is a usage error that
/// names the closest option the command asked about.
struct Arguments {
    private var words: [String]
    /// Every option name a command has asked for, for "did you mean".
    private(set) var known: [String] = ["--help"]

    init(_ words: [String]) { self.words = words }

    /// The words not taken yet, for a command that reads its own sub-actions (`analytics record ...`).
    var remainingWords: [String] { words }

    /// Removes `--name` (or an alias) and says whether it was there.
    mutating func flag(_ names: String...) -> Bool {
        known += names
        var found = false
        words.removeAll { word in
            let hit = names.contains(word)
            found = found || hit
            return hit
        }
        return found
    }

    /// Removes every `--name VALUE` and returns the values in order.
    mutating func values(_ names: String...) throws(UsageError) -> [String] {
        try values(names)
    }

    private mutating func values(_ names: [String]) throws(UsageError) -> [String] {
        known += names
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

    /// Removes `--name VALUE` and returns the last value given.
    mutating func value(_ names: String...) throws(UsageError) -> String? {
        var result: [String] = []
        for name in names { result += try values([name]) }
        return result.last
    }

    /// Reads `--name N` as a number within `range`.
    mutating func number<T: LosslessStringConvertible & Comparable>(
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
        return words
    }
}
