import Foundation

/// A property list file read through Foundation (XML or binary), with typed look-ups that are never
/// more forgiving than the device: a value of the wrong type counts as absent, and says so.
struct PropertyList {
    /// The top-level dictionary.
    let root: [String: Any]
    /// Where it was read from.
    let path: String

    /// Reads `path`; throws an ``AppConfigurationError`` that names the file and the problem.
    init(contentsOf path: String) throws(AppConfigurationError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw AppConfigurationError(path: path, problem: "cannot be read (\(Self.reason(error)))")
        }
        let value: Any
        do {
            value = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw AppConfigurationError(
                path: path, problem: "is not a property list (neither XML nor binary): \(Self.reason(error))")
        }
        guard let root = value as? [String: Any] else {
            throw AppConfigurationError(path: path, problem: "holds \(type(of: value)), not a dictionary")
        }
        self.root = root
        self.path = path
    }

    init(root: [String: Any], path: String) {
        self.root = root
        self.path = path
    }

    private static func reason(_ error: any Error) -> String {
        let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
        return text ?? (error as NSError).localizedDescription
    }

    /// A dictionary value at `key` of `dictionary`.
    static func dictionary(_ dictionary: [String: Any], _ key: String) -> [String: Any]? {
        dictionary[key] as? [String: Any]
    }

    /// A boolean, only when the plist holds a real `<true/>` or `<false/>` (an integer 1 is not one).
    static func bool(_ dictionary: [String: Any], _ key: String) -> Bool? {
        guard let value = dictionary[key], type(of: value) == Bool.self else { return nil }
        return value as? Bool
    }

    /// A string value.
    static func string(_ dictionary: [String: Any], _ key: String) -> String? {
        dictionary[key] as? String
    }

    /// A number (integer or real), not a boolean.
    static func number(_ dictionary: [String: Any], _ key: String) -> Double? {
        guard let value = dictionary[key], type(of: value) != Bool.self else { return nil }
        return (value as? NSNumber)?.doubleValue
    }
}

/// An extension's Info.plist that richpush cannot use: the file, and what is wrong with it.
public struct AppConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The file (or folder) concerned.
    public var path: String
    /// What is wrong, and what to do.
    public var problem: String

    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    public var description: String { "\(path) \(problem)" }
}
