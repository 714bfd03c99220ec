import POSIXKit

/// Why something could not be stored: the one I/O error, of kind `output` (``IOFailure/output(_:_:)``).
package typealias StoreError = IOFailure

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
