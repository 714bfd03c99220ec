import Glibc

/// A failed system call: the errno, what was being done, and to which path.
///
/// The message names the path and says what to do, so a command can print it as it is:
///
/// ```swift
/// do { try SystemCall.writeAll(descriptor, bytes, path: path) } catch {
///     print(error.message)  // cannot write 'out/report.json': No space left on device. Free some space ...
/// }
/// ```
package struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The errno value the call failed with.
    package var code: Int32
    /// What was being done, as a verb phrase: "open", "write", "create a temporary file in".
    package var operation: String
    /// The file or folder the call was about, when there is one.
    package var path: String?
    /// Replaces the system's text for the errno when the cause is more specific than errno can say.
    package var reason: String?

    package init(code: Int32, operation: String, path: String? = nil, reason: String? = nil) {
        self.code = code
        self.operation = operation
        self.path = path
        self.reason = reason
    }

    /// The error for the current `errno`.
    package static func current(_ operation: String, path: String? = nil) -> SystemError {
        SystemError(code: errno, operation: operation, path: path)
    }

    /// Why, in words: ``reason`` when set, else the system's text for the errno.
    package var cause: String { reason ?? Self.words(for: code) }

    /// The system's text for `code` ("No such file or directory"): the one place that calls `strerror`.
    package static func words(for code: Int32) -> String { String(cString: strerror(code)) }

    /// Whether the process (EMFILE) or the system (ENFILE) ran out of file descriptors.
    package var isDescriptorExhaustion: Bool { code == EMFILE || code == ENFILE }

    /// A sentence: what failed, why, and what to do.
    package var message: String {
        let subject = path.map { "cannot \(operation) '\($0)'" } ?? "cannot \(operation)"
        return subject + ": " + cause + "." + (advice.map { " " + $0 } ?? "")
    }

    package var description: String { message }

    /// What to do about the errno, for the common causes.
    package var advice: String? {
        guard reason == nil else { return nil }
        switch code {
        case ENOSPC, EDQUOT: return "Free some space on that disk, or write elsewhere."
        case EACCES, EPERM: return "Check the permissions of the file and its folder."
        case ENOENT: return "Check the path; its folder must exist."
        case ENOTDIR: return "A part of the path is not a folder; check the path."
        case EROFS: return "That file system is read-only; write elsewhere."
        case EISDIR: return "That is a folder; give a file name."
        case ELOOP: return "A symbolic link is in the way; richpush does not write through links. Remove it."
        case EMFILE, ENFILE:
            return "Raise the open-file limit (ulimit -n), or run fewer downloads at once."
        case EIO: return "The device reported an I/O error; check the disk."
        case EFBIG: return "The file is too large for that file system."
        default: return nil
        }
    }
}
