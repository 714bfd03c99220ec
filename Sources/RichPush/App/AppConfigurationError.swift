/// An app folder, an extension's Info.plist or an option about them that richpush cannot use: the
/// file (or option) and what is wrong with it.
///
/// ```swift
/// do { _ = try AppConfiguration.scan(folder: "MyApp") } catch {
///     print(error.code, error)  // unusable-input  MyApp/Ext/Info.plist is a binary property list ...
/// }
/// ```
package struct AppConfigurationError: Error, Sendable, CustomStringConvertible {
    /// Whose fault it is, as a short stable word: the input's (a data error) or the options' (a usage error).
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        package var description: String { name }

        /// A file or folder that cannot be used as it is: missing, unreadable, not a regular file, too
        /// large, not a property list, structurally damaged, or lacking a key iOS requires.
        package static let unusableInput = Code("unusable-input")
        /// A usable file given to the wrong option, two candidates where one is needed, or a malformed option.
        package static let invalidOption = Code("invalid-option")
    }

    package var code: Code
    /// The file (or folder, or option) concerned.
    package var path: String
    /// What is wrong, and what to do.
    package var problem: String

    package init(_ code: Code = .invalidOption, path: String, problem: String) {
        self.code = code
        self.path = path
        self.problem = problem
    }

    package var description: String { "\(path) \(problem)" }
}

extension ConfigurationError {
    /// An app folder or plist that cannot be used, as the library's one configuration error.
    package init(_ error: AppConfigurationError) {
        self.init(error.code == .unusableInput ? .unusableInput : .invalidValue, error.description)
    }
}
