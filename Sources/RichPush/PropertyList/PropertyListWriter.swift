import Foundation

/// The one writer of property lists: the App Group suite and the user attributes stored in it.
///
/// It hands Foundation a tree of Foundation objects it built itself (`NSDictionary`, `NSArray`,
/// `NSString`, `NSNumber`, `NSData`, `NSDate`), with each array bridged by `as NSArray`. That spelling
/// matters in the binary users install. Foundation on Linux keeps `Array`'s bridge to `NSArray` (its
/// `_ObjectiveCBridgeable` conformance) in an object file of its own in the static Foundation archive,
/// and a binary linked with `--static-swift-stdlib` only contains that file when some code refers to
/// it. Without it every dynamic bridge of an array fails: Foundation boxes the array instead of
/// converting it, and `PropertyListSerialization` refuses the whole suite ("property lists cannot
/// contain objects of type 'Not A Type'"), while a build that links Foundation dynamically works.
/// The `as NSArray` below is such a reference, so the conformance is linked wherever this writer is.
///
/// ```swift
/// let data = try PropertyListWriter.data(["pending_custom_events": [event]], format: .binary)
/// ```
package enum PropertyListWriter {
    /// The encoded bytes of `root`, a tree of strings, numbers, booleans, dates, data, arrays and
    /// dictionaries with string keys (Swift values, or what ``PropertyListReader`` decoded).
    ///
    /// - Throws: a message naming the first value that is not a property-list type, or Foundation's
    ///   own error text.
    package static func data(_ root: Any, format: PropertyListSerialization.PropertyListFormat)
        throws(PropertyListWriteError) -> Data
    {
        let object = try foundationObject(root, at: "root")
        do {
            return try PropertyListSerialization.data(fromPropertyList: object, format: format, options: 0)
        } catch {
            throw PropertyListWriteError(message: "\(error)")
        }
    }

    /// `value` as the Foundation object a property list holds; `path` names it in an error.
    static func foundationObject(_ value: Any, at path: String) throws(PropertyListWriteError) -> AnyObject {
        // A decoded number is an NSNumber already: kept as it is, so an integer 1 stays an integer
        // rather than matching `Bool` below.
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber { return number }
        switch value {
        case let string as String: return NSString(string: string)
        case let bool as Bool: return NSNumber(value: bool)
        case let int as Int: return NSNumber(value: int)
        case let int as Int64: return NSNumber(value: int)
        case let int as Int32: return NSNumber(value: int)
        case let int as UInt64: return NSNumber(value: int)
        case let double as Double: return NSNumber(value: double)
        case let float as Float: return NSNumber(value: float)
        case let data as Data: return NSData(data: data)
        case let date as Date: return NSDate(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate)
        case let array as [Any]:
            var objects: [AnyObject] = []
            objects.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                objects.append(try foundationObject(element, at: "\(path)[\(index)]"))
            }
            return objects as NSArray
        case let dictionary as [AnyHashable: Any]:
            var objects: [NSString: AnyObject] = [:]
            for (key, element) in dictionary {
                guard let name = key.base as? String else {
                    throw PropertyListWriteError(message: "\(path) has a key that is not a string (\(key))")
                }
                objects[NSString(string: name)] = try foundationObject(element, at: "\(path).\(name)")
            }
            return objects as NSDictionary
        default:
            throw PropertyListWriteError(
                message: "\(path) is a \(type(of: value)), which a property list cannot hold")
        }
    }
}

/// Why ``PropertyListWriter`` could not encode a value.
package struct PropertyListWriteError: Error, CustomStringConvertible, Sendable {
    package var message: String
    package var description: String { message }
}
