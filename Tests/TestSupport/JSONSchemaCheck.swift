import Foundation

/// Checks a JSON value against the subset of JSON Schema that `bench/report.schema.json` uses:
/// type, required, properties, additionalProperties (false or a schema), items, enum, propertyNames
/// (enum), minimum and maximum. Returns the violations, each with its JSON path.
public enum JSONSchemaCheck {
    public static func violations(of value: Any, against schema: [String: Any], path: String = "$") -> [String] {
        var problems: [String] = []
        if let type = schema["type"] as? String, !matches(value, type: type) {
            return ["\(path): expected \(type), found \(Swift.type(of: value))"]
        }
        if let allowed = schema["enum"] as? [Any], !allowed.contains(where: { equal($0, value) }) {
            problems.append("\(path): \(value) is not one of \(allowed)")
        }
        if let number = value as? NSNumber {
            if let minimum = schema["minimum"] as? Double, number.doubleValue < minimum {
                problems.append("\(path): \(number) < \(minimum)")
            }
            if let maximum = schema["maximum"] as? Double, number.doubleValue > maximum {
                problems.append("\(path): \(number) > \(maximum)")
            }
        }
        if let object = value as? [String: Any] {
            for key in schema["required"] as? [String] ?? [] where object[key] == nil {
                problems.append("\(path): missing '\(key)'")
            }
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for (key, member) in object {
                if let names = schema["propertyNames"] as? [String: Any], let allowed = names["enum"] as? [String],
                    !allowed.contains(key)
                {
                    problems.append("\(path): key '\(key)' is not one of \(allowed)")
                }
                if let sub = properties[key] as? [String: Any] {
                    problems += violations(of: member, against: sub, path: "\(path).\(key)")
                } else if let additional = schema["additionalProperties"] {
                    if let sub = additional as? [String: Any] {
                        problems += violations(of: member, against: sub, path: "\(path).\(key)")
                    } else if (additional as? Bool) == false {
                        problems.append("\(path): unexpected key '\(key)'")
                    }
                }
            }
        }
        if let array = value as? [Any], let items = schema["items"] as? [String: Any] {
            for (index, item) in array.enumerated() {
                problems += violations(of: item, against: items, path: "\(path)[\(index)]")
            }
        }
        return problems
    }

    private static func matches(_ value: Any, type: String) -> Bool {
        switch type {
        case "object": return value is [String: Any]
        case "array": return value is [Any]
        case "string": return value is String
        case "boolean": return value is Bool
        // On Linux, JSONSerialization's numbers bridge to Bool too, so numbers are told by NSNumber alone
        // (the report has no boolean fields).
        case "integer":
            guard let number = value as? NSNumber else { return false }
            return number.doubleValue == number.doubleValue.rounded()
        case "number": return value is NSNumber
        default: return true
        }
    }

    private static func equal(_ a: Any, _ b: Any) -> Bool {
        (a as? String).map { $0 == (b as? String) } ?? ((a as? NSNumber) == (b as? NSNumber))
    }
}
