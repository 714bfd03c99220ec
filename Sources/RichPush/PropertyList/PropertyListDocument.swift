import Foundation

/// A property list as ``PropertyListReader`` decoded it: the value, its format and its expanded size.
///
/// Not `Sendable`: the value is Foundation's `Any`.
package struct PropertyListDocument {
    /// The decoded top-level value.
    package var value: Any
    /// `.binary` or `.xml` (the only formats the reader accepts).
    package var format: PropertyListSerialization.PropertyListFormat
    /// How many objects the value holds (for XML, an upper bound: its elements).
    package var objects: Int
    /// How many bytes its strings and data hold, each shared one counted once per reference and as the
    /// file stores it (see ``PropertyListLimits/maximumExpandedBytes``); for XML, an upper bound: the
    /// file's size.
    package var expandedBytes: Int
    /// The file it came from.
    package var path: String

    /// The top-level value as a dictionary, which Info.plist files and suites always are.
    package func dictionary() throws(PropertyListError) -> [String: Any] {
        guard let root = value as? [String: Any] else {
            throw PropertyListError(
                .notAPropertyList, path: path, problem: "holds \(Self.kind(of: value)), not a dictionary")
        }
        return root
    }

    static func kind(of value: Any) -> String {
        switch value {
        case is String: "a string"
        case is [Any]: "an array"
        case is Data: "data"
        case is Date: "a date"
        case is NSNumber: "a number or boolean"
        default: "a \(type(of: value))"
        }
    }
}
