/// Why a file, folder or socket could not be used: richpush's one I/O error beside the domain errors
/// (a download's `FetchError`, a payload's verdict) and the one configuration error. Its ``Kind``
/// says whose problem it is, which decides the exit status: an output that cannot be written (74),
/// an input that cannot be used (65), a server that cannot start (69). `StoreError`,
/// `BatchInputError` and `AssetServerError` are its names where each kind is thrown.
package struct IOFailure: Error, Sendable, CustomStringConvertible {
    /// Whose problem it is.
    package enum Kind: Sendable, Equatable {
        /// An output (a stored file, a report, an output folder) cannot be written.
        case output
        /// An input (a batch's folder or file) cannot be used as a whole.
        case input
        /// Something could not start (a server's port, its certificate, its log).
        case start
    }

    package var kind: Kind
    /// What failed and what to do, naming the path.
    package var message: String
    /// The failed system call, with its errno, when that is why (nil for a refusal of richpush's own).
    package var systemError: SystemError?

    private init(_ kind: Kind, _ message: String, _ systemError: SystemError?) {
        self.kind = kind
        self.message = message
        self.systemError = systemError
    }

    /// An output that cannot be written; a system call's failure keeps its words and errno.
    package static func output(_ message: String, _ systemError: SystemError? = nil) -> IOFailure {
        IOFailure(.output, message, systemError)
    }
    package static func output(_ error: SystemError) -> IOFailure { IOFailure(.output, error.message, error) }

    /// An input that cannot be used as a whole.
    package static func input(_ message: String, _ systemError: SystemError? = nil) -> IOFailure {
        IOFailure(.input, message, systemError)
    }
    package static func input(_ error: SystemError) -> IOFailure { IOFailure(.input, error.message, error) }

    /// Something that could not start.
    package static func start(_ message: String, _ systemError: SystemError? = nil) -> IOFailure {
        IOFailure(.start, message, systemError)
    }
    package static func start(_ error: SystemError) -> IOFailure { IOFailure(.start, error.message, error) }

    package var description: String { message }
}
