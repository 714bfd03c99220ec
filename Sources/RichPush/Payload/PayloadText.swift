/// The payload's original text with one top-level key added, everything else byte for byte.
///
/// Re-encoding would reorder keys and rewrite numbers (`1.10`, 64-bit integers); inserting the
/// new member before the closing brace keeps every byte of the original.
package enum PayloadText {
    /// Inserts `"key": value` as the last member of the top-level object in `original`.
    ///
    /// `original` must be a JSON object (as ``JSONValue/parse(_:)`` accepted it); `isEmpty` says
    /// whether it had no members, so no comma is needed.
    package static func inserting(key: String, value: JSONValue, into original: [UInt8], isEmpty: Bool) -> [UInt8] {
        var end = original.count
        while end > 0, [0x20, 0x09, 0x0a, 0x0d].contains(original[end - 1]) { end -= 1 }
        guard end > 0, original[end - 1] == UInt8(ascii: "}") else { return original }
        var result = Array(original[..<(end - 1)])
        if !isEmpty { result.append(UInt8(ascii: ",")) }
        result += JSONValue.string(key).utf8
        result.append(UInt8(ascii: ":"))
        result += value.utf8
        result += original[(end - 1)...]
        return result
    }
}
