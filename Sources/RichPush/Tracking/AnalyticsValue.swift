import Foundation

/// A value an extension saves with an event or attribute, keeping its JSON type.
///
/// The suite stores it as a property-list value (string, integer, real, boolean, array of
/// strings); Braze receives it as the JSON value of the same type.
///
/// ```swift
/// let value = AnalyticsValue(commandLine: "[gold,silver]")   // .strings(["gold", "silver"])
/// ```
package enum AnalyticsValue: Sendable, Equatable, Codable {
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    /// An array attribute: an array of strings.
    case strings([String])

    /// Reads a command-line value: `true`/`false`, an integer, a decimal number, `[a,b]` (an array of
    /// strings), else the text as a string. Quote a value as `"42"` (with the quotes) to keep it a string.
    package init(commandLine text: String) {
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") {
            self = .string(String(text.dropFirst().dropLast()))
        } else if text == "true" || text == "false" {
            self = .bool(text == "true")
        } else if let integer = Int64(text) {
            self = .integer(integer)
        } else if let number = Double(text), number.isFinite, text.contains(where: { $0 == "." || $0 == "e" }) {
            self = .double(number)
        } else if text.hasPrefix("["), text.hasSuffix("]") {
            let inner = text.dropFirst().dropLast()
            self = .strings(
                inner.isEmpty
                    ? []
                    : inner.split(separator: ",", omittingEmptySubsequences: false).map {
                        $0.trimmingCharacters(in: .whitespaces)
                    })
        } else {
            self = .string(text)
        }
    }

    /// Reads a value from a decoded property list; `nil` for anything Braze cannot take as it is
    /// (a date, data, a dictionary, an array holding something other than strings).
    package init?(propertyList value: Any) {
        // Booleans first: Foundation hands both booleans and numbers back as NSNumber.
        if let number = value as? NSNumber, Self.isBoolean(number) {
            self = .bool(number.boolValue)
        } else if let text = value as? String {
            self = .string(text)
        } else if let number = value as? NSNumber {
            if Self.isInteger(number) {
                self = .integer(number.int64Value)
            } else {
                self = .double(number.doubleValue)
            }
        } else if let array = value as? [Any] {
            var strings: [String] = []
            for element in array {
                guard let text = element as? String else { return nil }
                strings.append(text)
            }
            self = .strings(strings)
        } else {
            return nil
        }
    }

    /// The value as Foundation writes it into a property list.
    package var propertyList: Any {
        switch self {
        case .string(let text): return text
        case .integer(let number): return NSNumber(value: number)
        case .double(let number): return NSNumber(value: number)
        case .bool(let flag): return NSNumber(value: flag)
        case .strings(let texts): return texts
        }
    }

    /// The value as JSON.
    package var json: JSONValue {
        switch self {
        case .string(let text): return .string(text)
        case .integer(let number): return .number(String(number))
        case .double(let number): return .number(Self.jsonNumber(number))
        case .bool(let flag): return .bool(flag)
        case .strings(let texts): return .array(texts.map { .string($0) })
        }
    }

    /// Short text for a table cell.
    package var display: String {
        switch self {
        case .string(let text): return "\"" + text + "\""
        case .integer(let number): return String(number)
        case .double(let number): return Self.jsonNumber(number)
        case .bool(let flag): return flag ? "true" : "false"
        case .strings(let texts): return "[" + texts.map { "\"" + $0 + "\"" }.joined(separator: ", ") + "]"
        }
    }

    /// The JSON value's type, for messages.
    package var typeName: String {
        switch self {
        case .string: return "string"
        case .integer, .double: return "number"
        case .bool: return "boolean"
        case .strings: return "array of strings"
        }
    }

    /// Reads the value from a JSON value of the same type; `nil` for null, objects and mixed arrays.
    package init?(json: JSONValue) {
        switch json {
        case .string(let text): self = .string(text)
        case .bool(let flag): self = .bool(flag)
        case .number(let text):
            if let integer = Int64(text) {
                self = .integer(integer)
            } else if let number = Double(text) {
                self = .double(number)
            } else {
                return nil
            }
        case .array(let elements):
            var strings: [String] = []
            for element in elements {
                guard case .string(let text) = element else { return nil }
                strings.append(text)
            }
            self = .strings(strings)
        case .object, .null: return nil
        }
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let number = try? container.decode(Double.self) {
            self = .double(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else {
            self = .strings(try container.decode([String].self))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let text): try container.encode(text)
        case .integer(let number): try container.encode(number)
        case .double(let number): try container.encode(number)
        case .bool(let flag): try container.encode(flag)
        case .strings(let texts): try container.encode(texts)
        }
    }

    private static func jsonNumber(_ number: Double) -> String {
        guard number.isFinite else { return "0" }
        if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) + ".0" }
        return String(number)
    }

    /// Whether Foundation made this number from a boolean (its type is `c`, as Foundation gives `Bool`).
    package static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }

    private static func isInteger(_ number: NSNumber) -> Bool {
        switch String(cString: number.objCType) {
        case "f", "d": return false
        default: return true
        }
    }
}
