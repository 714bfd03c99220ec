/// Why an analytics command could not do what was asked: a stable code and a message that names the
/// file or endpoint and says what to do.
///
/// ```swift
/// do { _ = try AppGroupSuite(container: "group", suite: nil) } catch {
///     print(error.code, error.message)  // suite-not-found  no suite in 'group/Library/Preferences' ...
/// }
/// ```
public struct AnalyticsError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure, as a short stable word for reports and for a front end to map.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// Every code as an enum, for switches that must name each one: a new code does not
        /// compile until every such switch maps it (no `default:`).
        public enum Kind: String, Sendable, CaseIterable {
            case suiteNotFound = "suite-not-found"
            case suiteUnreadable = "suite-unreadable"
            case storage
            case outboxUnreadable = "outbox-unreadable"
            case busy
            case invalidInput = "invalid-input"
            case apiKey = "api-key"
        }

        /// Which code it is, for an exhaustive switch.
        public let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }
        public var description: String { kind.rawValue }

        /// The container or suite could not be found, or the suite name is unusable.
        public static let suiteNotFound = Code(.suiteNotFound)
        /// The suite file is not a property list dictionary.
        public static let suiteUnreadable = Code(.suiteUnreadable)
        /// A file could not be read, written, locked or replaced.
        public static let storage = Code(.storage)
        /// The outbox file is not one richpush wrote.
        public static let outboxUnreadable = Code(.outboxUnreadable)
        /// Another flush holds the suite.
        public static let busy = Code(.busy)
        /// The caller's input (an option value) is unusable.
        public static let invalidInput = Code(.invalidInput)
        /// The API key is missing or unusable.
        public static let apiKey = Code(.apiKey)
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
