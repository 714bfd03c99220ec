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
public struct PropertyListError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure, as a short stable word.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The file does not exist.
        public static let missing = Code("missing")
        /// The file could not be opened or read (permissions, an I/O error).
        public static let unreadable = Code("unreadable")
        /// A FIFO, device, socket or folder: never opened for a read that could block.
        public static let notARegularFile = Code("not-a-regular-file")
        /// Larger than the limit for its kind of file.
        public static let tooLarge = Code("too-large")
        /// A binary property list whose structure is broken (trailer, offsets, references, lengths).
        public static let malformed = Code("malformed")
        /// A binary property list whose references loop.
        public static let referenceCycle = Code("reference-cycle")
        /// More objects (shared references counted each time they are reached) than the limit.
        public static let tooManyObjects = Code("too-many-objects")
        /// A format or object type that Info.plist files and suites never use.
        public static let unsupported = Code("unsupported")
        /// Neither a binary nor an XML property list Foundation can decode.
        public static let notAPropertyList = Code("not-a-property-list")
    }

    public var code: Code
    /// The file concerned.
    public var path: String
    /// What is wrong, as a predicate of the file's name.
    public var problem: String
    /// The failed system call, for ``Code/missing`` and ``Code/unreadable``.
    public var cause: SystemError?

    public init(_ code: Code, path: String, problem: String, cause: SystemError? = nil) {
        self.code = code
        self.path = path
        self.problem = problem
        self.cause = cause
    }

    /// The file's name (quoted, control characters escaped) and the problem.
    public var message: String { "'\(path.escapingControlCharacters)' \(problem)" }

    public var description: String { message }
}
