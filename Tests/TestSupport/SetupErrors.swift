import RichPush
import Testing

/// The ``ConfigurationError`` `body` throws, or nil when it throws nothing (any other error fails the test).
package func setupError(_ body: () throws -> Void) -> ConfigurationError? {
    do {
        try body()
        return nil
    } catch let error as ConfigurationError {
        return error
    } catch {
        Issue.record("not a ConfigurationError: \(error)")
        return nil
    }
}

/// Spells settings as the command line does (`--concurrency`), so tests read the messages users see.
/// Every test that checks such a message calls it first; it installs the same spelling each time.
package func useCommandLineSpelling() {
    Setting.spelling = { "--" + $0.rawValue }
}

/// Whether `error` is a mistake in the settings (a usage error to the command line) whose whole
/// sentence, spelled as the command line does, is `text`.
package func isUsage(_ error: ConfigurationError?, _ text: String) -> Bool {
    useCommandLineSpelling()
    guard let error, [.invalidValue, .invalidCombination, .changedSettings].contains(error.code) else { return false }
    return error.text == text
}

/// Whether `error` is an unusable input whose whole sentence is `text`.
package func isUnusable(_ error: ConfigurationError?, _ text: String) -> Bool {
    useCommandLineSpelling()
    return error?.code == .unusableInput && error?.text == text
}
