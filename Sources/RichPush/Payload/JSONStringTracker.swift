/// Follows JSON text byte by byte and says which bytes belong to a string (its quotes included), so a
/// scan over raw bytes can skip what strings hold: a payload's compact size, a report's shape check.
package struct JSONStringTracker {
    private var inString = false
    private var escaped = false

    package init() {}

    /// Whether `byte`, the next byte of the text, is part of a string (an opening or closing quote is).
    package mutating func isInString(_ byte: UInt8) -> Bool {
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
            return true
        }
        if byte == UInt8(ascii: "\"") {
            inString = true
            return true
        }
        return false
    }
}
