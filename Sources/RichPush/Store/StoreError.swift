import POSIXKit

/// Why something could not be stored.
package struct StoreError: Error, Sendable, CustomStringConvertible {
    package var message: String
    /// The failed system call, with its errno, when that is why (nil for a refusal of richpush's own).
    package var systemError: SystemError?

    package init(_ message: String, _ systemError: SystemError? = nil) {
        self.message = message
        self.systemError = systemError
    }

    /// A system call failed: its words are the message, its errno is kept.
    package init(_ error: SystemError) { self.init(error.message, error) }

    package var description: String { message }
}

extension FetchError {
    /// The store could not take a download: `storage-failed`, with the store's message, then
    /// `advice`, and the system call kept.
    init(storing error: StoreError, _ advice: String = "") {
        if let system = error.systemError {
            self.init(storing: system)
            message = error.message + advice
        } else {
            self.init(.storageFailed, error.message + advice)
        }
    }
}
