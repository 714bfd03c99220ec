import POSIXKit
/// Why a run could not be set up: a stable code, what was wrong, what to do, and the cause.
///
/// Every configuration and session of the library throws it before any work starts. The ``Code`` is
/// semantic (what kind of problem), never a process exit status: a front end decides what each
/// code means to its users (the command line keeps that in one table). `setting` names the
/// setting at fault when there is one, so a front end can point at the option that set it.
///
/// ```swift
/// throw ConfigurationError(.invalidValue, "takes I/N with 1 <= I <= N, for example 2/4", setting: .shard)
/// ```
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem, as a stable word.
    public enum Code: String, Sendable, CaseIterable {
        /// A setting's value is malformed or out of range.
        case invalidValue = "invalid-value"
        /// A required setting is missing, or two settings cannot go together.
        case invalidCombination = "invalid-combination"
        /// A resume would mix results made with other settings.
        case changedSettings = "changed-settings"
        /// An input (a file, a folder, a certificate, a payload) is missing or cannot be used.
        case unusableInput = "unusable-input"
        /// Something the run needs cannot start: the download engine, a server, a port.
        case unavailable
        /// The process may not open enough files for the run.
        case tooFewDescriptors = "too-few-descriptors"
        /// An output cannot be made or written.
        case unwritableOutput = "unwritable-output"
        /// Another run holds a resource this one needs (an output folder, a suite).
        case busy
        /// A fault in richpush itself.
        case internalFault = "internal-fault"
    }

    public var code: Code
    /// What was wrong and what to do. When `setting` is set, the message reads after its name
    /// ("takes I/N ..."), and ``text`` joins them.
    public var message: String
    /// The setting at fault, if one is.
    package var setting: Setting?
    /// A likely fix, when the message alone does not say it.
    public var hint: String?
    /// The lower-level cause (a system error's text): for people, never to be parsed.
    public var cause: String?

    package init(
        _ code: Code, _ message: String, setting: Setting? = nil, hint: String? = nil, cause: String? = nil
    ) {
        self.code = code
        self.message = message
        self.setting = setting
        self.hint = hint
        self.cause = cause
    }

    /// A malformed value of `setting`: the message reads after the setting's name.
    package static func invalid(_ setting: Setting, _ message: String) -> ConfigurationError {
        ConfigurationError(.invalidValue, message, setting: setting)
    }

    /// The whole sentence: the setting, the message, the hint.
    public var text: String {
        var text = setting.map { "\($0) \(message)" } ?? message
        if let hint { text += (text.hasSuffix(".") ? " " : ". ") + hint }
        return text
    }

    public var description: String { text }
}

extension ConfigurationError {
    /// The one I/O error as the library's users see it: its kind in the configuration error's codes.
    package init(_ failure: IOFailure) {
        let code: Code =
            switch failure.kind {
            case .input: .unusableInput
            case .output: .unwritableOutput
            case .start: .unavailable
            }
        self.init(code, failure.message)
    }
}
