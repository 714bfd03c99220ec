import Foundation
import RichPush

/// The bounded property list reader over arbitrary bytes.
///
/// - It never crashes, and never hands Foundation a file past its limits: bytes over the size limit
///   are refused, and an accepted value holds no more objects, and no more bytes of strings and data,
///   than the reader counted, which is within the limits.
/// - What it accepts is what Foundation decoded; written back as a binary plist and read again it
///   is the same value.
enum PlistInvariants {
    /// Tight limits, so fuzz inputs (a few kilobytes) reach every edge: a string of a few hundred bytes
    /// referenced a dozen times passes the expanded-byte limit.
    static let limits = PropertyListLimits(
        maximumBytes: 2048, maximumObjects: 500, maximumExpandedBytes: 4096, kind: "a fuzz input")

    static func check(_ bytes: [UInt8]) {
        let reader = PropertyListReader(limits: limits)
        let document: PropertyListDocument
        do {
            document = try reader.decode(bytes, path: "fuzz.plist")
        } catch {
            require(error.message.hasPrefix("'fuzz.plist' "), "an error that does not name the file: \(error)")
            return
        }
        require(bytes.count <= limits.maximumBytes, "accepted \(bytes.count) bytes over the limit")
        require(document.objects <= limits.maximumObjects, "counted \(document.objects) objects over the limit")
        let actual = objectCount(document.value)
        require(actual <= document.objects, "decoded \(actual) objects; the reader counted \(document.objects)")
        require(
            document.expandedBytes <= limits.maximumExpandedBytes,
            "counted \(document.expandedBytes) bytes of strings and data over the limit")
        let units = contentUnits(document.value)
        require(
            units <= document.expandedBytes,
            "decoded \(units) units of strings and data; the reader counted \(document.expandedBytes) bytes")
        guard
            let data = try? PropertyListSerialization.data(
                fromPropertyList: document.value, format: .binary, options: 0)
        else { return }
        let generous = PropertyListReader(limits: .infoPlist)
        guard let again = try? generous.decode([UInt8](data), path: "round-trip.plist") else {
            require(false, "Foundation's own binary plist of an accepted value is refused")
            return
        }
        let same =
            (again.value as? NSObject)?.isEqual(document.value) == true
            || (try? PropertyListSerialization.data(fromPropertyList: again.value, format: .binary, options: 0)) == data
        require(same, "binary round trip changed the value")
    }

    /// The UTF-16 units of every string (keys included) and the bytes of every data object a decoded
    /// value holds: never more than the bytes the file stores them in (one per ASCII character, two
    /// per UTF-16 unit), however many times the file references them.
    static func contentUnits(_ value: Any) -> Int {
        switch value {
        case let string as String: string.utf16.count
        case let data as Data: data.count
        case let dictionary as [String: Any]:
            dictionary.reduce(0) { $0 + $1.key.utf16.count + contentUnits($1.value) }
        case let array as [Any]: array.reduce(0) { $0 + contentUnits($1) }
        default: 0
        }
    }

    /// The objects a decoded value holds: itself, and each key and element below it.
    static func objectCount(_ value: Any) -> Int {
        switch value {
        case let dictionary as [String: Any]: 1 + dictionary.values.reduce(0) { $0 + 1 + objectCount($1) }
        case let array as [Any]: 1 + array.reduce(0) { $0 + objectCount($1) }
        default: 1
        }
    }
}
