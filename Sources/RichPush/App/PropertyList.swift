import Foundation

/// A property list file read through Foundation (XML or binary), with typed look-ups that are never
/// more forgiving than the device: a value of the wrong type counts as absent, and says so.
struct PropertyList {
    /// The top-level dictionary.
    let root: [String: Any]
    /// Where it was read from.
    let path: String

    /// Reads `path` through the bounded ``PropertyListReader`` (Info.plist limits); throws an
    /// ``AppConfigurationError`` that names the file and the problem.
    init(contentsOf path: String) throws(AppConfigurationError) {
        do {
            root = try PropertyListReader(limits: .infoPlist).read(contentsOf: path).dictionary()
        } catch {
            throw AppConfigurationError(.unusableInput, path: path, problem: error.problem)
        }
        self.path = path
    }

    init(root: [String: Any], path: String) {
        self.root = root
        self.path = path
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
