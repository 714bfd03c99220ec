import POSIXKit

/// Why a property list file cannot be used: a stable code, the file, and what is wrong with it.
///
/// ``problem`` is a predicate that follows the file's name ("is larger than 1048576 bytes ...",
/// "is a binary property list with a bad trailer: ..."), so the message reads as one sentence:
///
/// ```swift
/// do { _ = try PropertyListReader(limits: .infoPlist).read(contentsOf: "Ext/Info.plist") } catch {
///     print(error.message)  // 'Ext/Info.plist' is a binary property list that expands to more than ...
/// }
/// ```
package struct PropertyListError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure, as a short stable word.
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        /// Every code as an enum, for switches that must name each one: a new code does not
        /// compile until every such switch maps it (no `default:`).
        package enum Kind: String, Sendable, CaseIterable {
            case missing
            case unreadable
            case notARegularFile = "not-a-regular-file"
            case tooLarge = "too-large"
            case malformed
            case referenceCycle = "reference-cycle"
            case tooManyObjects = "too-many-objects"
            case tooManyExpandedBytes = "too-many-expanded-bytes"
            case unsupported
            case notAPropertyList = "not-a-property-list"
        }

        /// Which code it is, for an exhaustive switch.
        package let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }
        package var description: String { kind.rawValue }

        /// The file does not exist.
        package static let missing = Code(.missing)
        /// The file could not be opened or read (permissions, an I/O error).
        package static let unreadable = Code(.unreadable)
        /// A FIFO, device, socket or folder: never opened for a read that could block.
        package static let notARegularFile = Code(.notARegularFile)
        /// Larger than the limit for its kind of file.
        package static let tooLarge = Code(.tooLarge)
        /// A binary property list whose structure is broken (trailer, offsets, references, lengths).
        package static let malformed = Code(.malformed)
        /// A binary property list whose references loop.
        package static let referenceCycle = Code(.referenceCycle)
        /// More objects (shared references counted each time they are reached) than the limit.
        package static let tooManyObjects = Code(.tooManyObjects)
        /// More bytes of strings and data (each shared one counted each time it is reached) than the limit.
        package static let tooManyExpandedBytes = Code(.tooManyExpandedBytes)
        /// A format or object type that Info.plist files and suites never use.
        package static let unsupported = Code(.unsupported)
        /// Neither a binary nor an XML property list Foundation can decode.
        package static let notAPropertyList = Code(.notAPropertyList)
    }

    package var code: Code
    /// The file concerned.
    package var path: String
    /// What is wrong, as a predicate of the file's name.
    package var problem: String
    /// The failed system call, for ``Code/missing`` and ``Code/unreadable``.
    package var cause: SystemError?

    package init(_ code: Code, path: String, problem: String, cause: SystemError? = nil) {
        self.code = code
        self.path = path
        self.problem = problem
        self.cause = cause
    }

    /// The file's name (quoted, control characters escaped) and the problem.
    package var message: String { "'\(path.escapingControlCharacters)' \(problem)" }

    package var description: String { message }
}
