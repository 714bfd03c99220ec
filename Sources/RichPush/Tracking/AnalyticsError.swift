/// Why an analytics command could not do what was asked: a stable code and a message that names the
/// file or endpoint and says what to do.
///
/// ```swift
/// do { _ = try AppGroupSuite(container: "group", suite: nil) } catch {
///     print(error.code, error.message)  // suite-not-found  no suite in 'group/Library/Preferences' ...
/// }
/// ```
package struct AnalyticsError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure, as a short stable word for reports and for a front end to map.
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        /// Every code as an enum, for switches that must name each one: a new code does not
        /// compile until every such switch maps it (no `default:`).
        package enum Kind: String, Sendable, CaseIterable {
            case suiteNotFound = "suite-not-found"
            case suiteUnreadable = "suite-unreadable"
            case storage
            case outboxUnreadable = "outbox-unreadable"
            case busy
            case invalidInput = "invalid-input"
            case apiKey = "api-key"
        }

        /// Which code it is, for an exhaustive switch.
        package let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }
        package var description: String { kind.rawValue }

        /// The container or suite could not be found, or the suite name is unusable.
        package static let suiteNotFound = Code(.suiteNotFound)
        /// The suite file is not a property list dictionary.
        package static let suiteUnreadable = Code(.suiteUnreadable)
        /// A file could not be read, written, locked or replaced.
        package static let storage = Code(.storage)
        /// The outbox file is not one richpush wrote.
        package static let outboxUnreadable = Code(.outboxUnreadable)
        /// Another flush holds the suite.
        package static let busy = Code(.busy)
        /// The caller's input (an option value) is unusable.
        package static let invalidInput = Code(.invalidInput)
        /// The API key is missing or unusable.
        package static let apiKey = Code(.apiKey)
    }

    package var code: Code
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
}
