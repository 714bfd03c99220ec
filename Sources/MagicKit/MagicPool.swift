import Foundation
import Synchronization

/// What libmagic says a byte buffer is.
package struct MagicAnswer: Sendable, Equatable {
    /// The MIME type, for example `image/jpeg`.
    package var mime: String
    /// The human description, which carries image dimensions ("PNG image data, 1200 x 600, ...").
    package var description: String
}

/// Errors MagicKit raises.
package enum MagicKitError: Error, Sendable, CustomStringConvertible {
    /// libmagic could not open or load its database.
    case databaseUnavailable
    /// The database could not be opened because this process has no file descriptor left (EMFILE).
    case outOfDescriptors

    package var description: String {
        switch self {
        case .databaseUnavailable: "libmagic could not load its database (is libmagic-mgc installed?)"
        case .outOfDescriptors:
            "libmagic could not open its database: this process has no file descriptor left (ulimit -n)"
        }
    }
}

/// A pool of libmagic cookies, each used by one thread at a time.
///
/// Cookies are created lazily, one at a time, up to `capacity`; a caller that finds none idle
/// makes one if the pool is below capacity, otherwise waits for one to be returned.
/// Each cookie holds its own copy of the database (about 9 MB), so keep the pool small: one per core.
///
/// ```swift
/// let pool = MagicPool()
/// let answer = try pool.identify(bytes)   // MagicAnswer(mime: "image/png", description: "PNG image data, ...")
/// ```
package final class MagicPool: Sendable {
    private struct State {
        var idle: [MagicCookie] = []
        var created = 0
    }

    private let state: Mutex<State>
    private let available: DispatchSemaphore
    private let capacity: Int

    /// Creates an empty pool that will hold at most `capacity` cookies.
    package init(capacity: Int = ProcessInfo.processInfo.activeProcessorCount) {
        self.capacity = max(1, capacity)
        state = Mutex(State())
        available = DispatchSemaphore(value: self.capacity)
    }

    /// Loads one cookie's database now, unless one exists or is being made: called off the hot path
    /// (a blocking thread) so that the first ``identify(_:describing:)`` finds it ready. Blocks while
    /// it loads.
    package func prewarm() {
        available.wait()
        defer { available.signal() }
        let first = state.withLock { state -> Bool in
            guard state.created == 0 else { return false }
            state.created += 1
            return true
        }
        guard first else { return }
        if let cookie = MagicCookie() {
            state.withLock { $0.idle.append(cookie) }
        } else {
            state.withLock { $0.created -= 1 }
        }
    }

    /// Identifies `bytes`; blocks briefly when every cookie is busy. Without `describing`, only the
    /// MIME type is asked for and the description is empty (half the work).
    package func identify(_ bytes: UnsafeRawBufferPointer, describing: Bool = true) throws(MagicKitError)
        -> MagicAnswer
    {
        available.wait()
        defer { available.signal() }
        let reused = state.withLock { state -> MagicCookie? in
            if let cookie = state.idle.popLast() { return cookie }
            state.created += 1
            return nil
        }
        // Creating happens outside the lock but the semaphore bounds how many exist at once.
        guard let cookie = reused ?? MagicCookie() else {
            let code = errno
            state.withLock { $0.created -= 1 }
            throw code == EMFILE || code == ENFILE ? .outOfDescriptors : .databaseUnavailable
        }
        let answer = cookie.identify(bytes, describing: describing)
        state.withLock { $0.idle.append(cookie) }
        return MagicAnswer(mime: answer.mime, description: answer.description)
    }

    /// Identifies a byte array.
    package func identify(_ bytes: [UInt8]) throws(MagicKitError) -> MagicAnswer {
        let result = bytes.withUnsafeBytes { buffer in Result { () throws(MagicKitError) in try identify(buffer) } }
        return try result.get()
    }
}
