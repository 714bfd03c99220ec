import AssetServer
import Foundation
import POSIXKit
import RichPush
import RichPushRuns
import RichPushServices

/// The one place an error becomes an exit status and a message: every command's errors, every
/// library error code, mapped through one table (``ExitCode``; the README's "What richpush decides").
///
/// ```swift
/// let failure = ExitStatus.failure(for: error)   // CommandFailure(code: .dataError, message: "...")
/// ```
enum ExitStatus {
    /// Every error a command lets through, as a message without library jargon and a code from the table.
    static func failure(for error: Error) -> CommandFailure {
        switch error {
        case let failure as CommandFailure: return failure
        case let error as UsageError: return CommandFailure(.usage, error.description)
        case let error as ConfigurationError: return CommandFailure(code(for: error.code), error.text)
        case let error as AnalyticsError: return CommandFailure(code(for: error.code), error.message)
        case let error as AppConfigurationError:
            return CommandFailure(error.code == .unusableInput ? .dataError : .usage, error.description)
        case let error as SystemError: return CommandFailure(.ioError, error.message)
        case let error as IOFailure:
            switch error.kind {
            case .output: return CommandFailure(.ioError, error.message)
            case .input: return CommandFailure(.dataError, error.message)
            case .start: return CommandFailure(.unavailable, error.message)
            }
        case let error as SniffError: return CommandFailure(.dataError, error.message)
        case let error as SampleExpectationsError: return CommandFailure(.dataError, "\(error); fix that file.")
        case let error as FetchError: return CommandFailure(.unavailable, error.engineStartMessage)
        case let error as CocoaError: return failure(for: error)
        case is DecodingError:
            return CommandFailure(.dataError, "the input is not the JSON richpush expects; check the file.")
        case is EncodingError:
            return CommandFailure(.software, "cannot encode the output as JSON (please report it).")
        default:
            return CommandFailure(.software, "internal error (please report it): \(type(of: error))")
        }
    }

    /// The exit status of a library configuration error.
    static func code(for code: ConfigurationError.Code) -> ExitCode {
        switch code {
        case .invalidValue, .invalidCombination, .changedSettings: .usage
        case .unusableInput: .dataError
        case .unavailable, .tooFewDescriptors, .busy: .unavailable
        case .unwritableOutput: .ioError
        case .internalFault: .software
        }
    }

    /// The exit status of an analytics error.
    static func code(for code: AnalyticsError.Code) -> ExitCode {
        switch code.kind {
        case .suiteNotFound, .suiteUnreadable, .outboxUnreadable: .dataError
        case .storage: .ioError
        case .busy: .unavailable
        case .invalidInput, .apiKey: .usage
        }
    }

    /// The exit status of one download (`fetch`): 0 when it succeeded; 74 when the body could not be
    /// stored in the output the user gave (`storing`), an output problem rather than the server's; 1 otherwise.
    static func code(for outcome: Result<FetchResult, FetchError>, storing: Bool) -> ExitCode {
        switch outcome {
        case .success: .success
        case .failure(let error): storing && error.code == .storageFailed ? .ioError : .failure
        }
    }

    /// The exit status of one payload's outcome (`process`): 0 when it shows as intended and no
    /// content extension would crash on it or fail to show it; 65 when APNs would refuse it; 69 when
    /// richpush ran out of descriptors (the client's verdict, not the payload's or the host's); 1 otherwise.
    static func code(for outcome: Outcome) -> ExitCode {
        if outcome.reason == .tooManyOpenFiles { return .unavailable }
        switch outcome.verdict {
        case .rejected: return .dataError
        case .fallback, .expired, .notInvoked: return .failure
        case .attached, .noAttachment:
            switch outcome.contentExtension?.outcome {
            case .wouldCrash?, .configurationError?: return .failure
            case .shows?, .default?, nil: return .success
            }
        }
    }

    /// A Foundation file error in the system's words, with the path.
    private static func failure(for error: CocoaError) -> CommandFailure {
        let path = (error.userInfo[NSFilePathErrorKey] as? String).map { " '\($0.escapingControlCharacters)'" }
        let underlying = (error.userInfo[NSUnderlyingErrorKey] as? NSError).map {
            SystemError.words(for: Int32($0.code))
        }
        let reason = underlying ?? (error.isFileError ? "no such file, or no permission" : "unusable data")
        let code: ExitCode = error.code.rawValue >= 512 && error.code.rawValue < 1024 ? .ioError : .dataError
        return CommandFailure(
            code, "cannot \(code == .ioError ? "write" : "read")\(path ?? " the input"): \(reason). Check the path.")
    }
}
