extension String {
    /// The text with control characters written as visible escapes (`\n`, `\r`, `\t`, `\u{1B}`), so
    /// payload text echoed in a message can neither start a line nor drive the terminal.
    ///
    /// Covers C0 controls, DEL, C1 controls and the Unicode line and paragraph separators.
    ///
    /// ```swift
    /// "evil\nattached: ok".escapingControlCharacters  // "evil\\nattached: ok"
    /// ```
    package var escapingControlCharacters: String {
        guard unicodeScalars.contains(where: Self.isControl) else { return self }
        var result = ""
        result.reserveCapacity(utf8.count + 8)
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where Self.isControl(scalar):
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
