import Foundation

/// Checks a JSON value against the subset of JSON Schema (2020-12) that richpush's schemas use.
///
/// Keywords: type (a name or a list), enum, const, minimum, maximum, pattern, required, properties,
/// additionalProperties (false or a schema), unevaluatedProperties (false), propertyNames (enum),
/// items, allOf and `$ref` (`#/$defs/NAME` in the same document, or `FILE` / `FILE#/$defs/NAME`
/// beside it). Returns the violations, each with its JSON path.
package enum JSONSchemaCheck {
    /// Checks `value` against the schema in `schemaFile`, resolving file references beside it.
    package static func violations(of value: Any, schemaFile: String) throws -> [String] {
        let document = try Document(file: schemaFile)
        return Checker(value: value, schema: document.root, document: document, path: "$").run().problems
    }

    /// Checks `value` against `schema` (file references resolve against the current directory).
    package static func violations(of value: Any, against schema: [String: Any], path: String = "$") -> [String] {
        let document = Document(root: schema, folder: FileManager.default.currentDirectoryPath)
        return Checker(value: value, schema: schema, document: document, path: path).run().problems
    }

    /// Parses JSON text (one object or array) for ``violations(of:schemaFile:)``.
    package static func parse(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    struct Document {
        var root: [String: Any]
        var folder: String

        init(root: [String: Any], folder: String) {
            self.root = root
            self.folder = folder
        }

        init(file: String) throws {
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw SchemaError(message: "\(file) is not a JSON object")
            }
            self.init(root: root, folder: (file as NSString).deletingLastPathComponent)
        }

        /// The schema a `$ref` names, and the document it lives in.
        func resolve(_ reference: String) -> (schema: [String: Any], document: Document)? {
            let parts = reference.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            var document = self
            if !parts[0].isEmpty {
                guard let loaded = try? Document(file: folder + "/" + parts[0]) else { return nil }
                document = loaded
            }
            var node: Any = document.root
            let pointer = parts.count > 1 ? parts[1] : ""
            for step in pointer.split(separator: "/") {
                guard let object = node as? [String: Any], let next = object[String(step)] else { return nil }
                node = next
            }
            return (node as? [String: Any]).map { ($0, document) }
        }
    }

    struct SchemaError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    private struct Checker {
        var value: Any
        var schema: [String: Any]
        var document: Document
        var path: String

        /// The violations, and the property names this schema (with its `$ref` and `allOf`) evaluated.
        func run() -> (problems: [String], evaluated: Set<String>) {
            var problems: [String] = []
            var evaluated: Set<String> = []
            if let reference = schema["$ref"] as? String {
                guard let (target, targetDocument) = document.resolve(reference) else {
                    return (["\(path): cannot resolve $ref '\(reference)'"], [])
                }
                let result = Checker(value: value, schema: target, document: targetDocument, path: path).run()
                problems += result.problems
                evaluated.formUnion(result.evaluated)
            }
            for sub in schema["allOf"] as? [[String: Any]] ?? [] {
                let result = Checker(value: value, schema: sub, document: document, path: path).run()
                problems += result.problems
                evaluated.formUnion(result.evaluated)
            }
            if let type = schema["type"] {
                let names = (type as? [String]) ?? [(type as? String) ?? ""]
                if !names.contains(where: { matches(value, type: $0) }) {
                    return (
                        problems + ["\(path): expected \(names.joined(separator: " or ")), found \(describe(value))"],
                        []
                    )
                }
            }
            if let allowed = schema["enum"] as? [Any], !allowed.contains(where: { equal($0, value) }) {
                problems.append("\(path): \(value) is not one of \(allowed)")
            }
            if let constant = schema["const"], !equal(constant, value) {
                problems.append("\(path): \(value) is not \(constant)")
            }
            if let number = value as? NSNumber, !isBoolean(value) {
                if let minimum = schema["minimum"] as? Double, number.doubleValue < minimum {
                    problems.append("\(path): \(number) < \(minimum)")
                }
                if let maximum = schema["maximum"] as? Double, number.doubleValue > maximum {
                    problems.append("\(path): \(number) > \(maximum)")
                }
            }
            if let string = value as? String, let pattern = schema["pattern"] as? String {
                let matched = (try? NSRegularExpression(pattern: pattern)).map {
                    $0.firstMatch(in: string, range: NSRange(string.startIndex..., in: string)) != nil
                }
                if matched != true { problems.append("\(path): '\(string)' does not match \(pattern)") }
            }
            if let object = value as? [String: Any] {
                problems += checkObject(object, evaluated: &evaluated)
            }
            if let array = value as? [Any], let items = schema["items"] as? [String: Any] {
                for (index, item) in array.enumerated() {
                    problems +=
                        Checker(value: item, schema: items, document: document, path: "\(path)[\(index)]").run()
                        .problems
                }
            }
            return (problems, evaluated)
        }

        private func checkObject(_ object: [String: Any], evaluated: inout Set<String>) -> [String] {
            var problems: [String] = []
            for key in schema["required"] as? [String] ?? [] where object[key] == nil {
                problems.append("\(path): missing '\(key)'")
            }
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for key in object.keys.sorted() {
                let member = object[key] as Any
                if let names = schema["propertyNames"] as? [String: Any], let allowed = names["enum"] as? [String],
                    !allowed.contains(key)
                {
                    problems.append("\(path): key '\(key)' is not one of \(allowed)")
                }
                if let sub = properties[key] as? [String: Any] {
                    evaluated.insert(key)
                    problems +=
                        Checker(value: member, schema: sub, document: document, path: "\(path).\(key)").run()
                        .problems
                } else if let additional = schema["additionalProperties"] {
                    evaluated.insert(key)
                    if let sub = additional as? [String: Any] {
                        problems +=
                            Checker(value: member, schema: sub, document: document, path: "\(path).\(key)")
                            .run().problems
                    } else if (additional as? Bool) == false {
                        problems.append("\(path): unexpected key '\(key)'")
                    }
                }
            }
            if (schema["unevaluatedProperties"] as? Bool) == false {
                for key in object.keys.sorted() where !evaluated.contains(key) {
                    problems.append("\(path): unexpected key '\(key)'")
                }
            }
            return problems
        }
    }

    /// JSONSerialization gives booleans as NSNumber too; theirs is the `char` type.
    private static func isBoolean(_ value: Any) -> Bool {
        (value as? NSNumber).map { String(cString: $0.objCType) == "c" } ?? false
    }

    private static func describe(_ value: Any) -> String {
        isBoolean(value) ? "a boolean" : value is NSNumber ? "a number" : "\(Swift.type(of: value))"
    }

    private static func matches(_ value: Any, type: String) -> Bool {
        switch type {
        case "object": return value is [String: Any]
        case "array": return value is [Any]
        case "string": return value is String
        case "boolean": return isBoolean(value)
        case "integer":
            guard let number = value as? NSNumber, !isBoolean(value) else { return false }
            return number.doubleValue == number.doubleValue.rounded()
        case "number": return value is NSNumber && !isBoolean(value)
        case "null": return value is NSNull
        default: return true
        }
    }

    private static func equal(_ a: Any, _ b: Any) -> Bool {
        if let a = a as? String { return a == (b as? String) }
        if isBoolean(a) != isBoolean(b) { return false }
        return (a as? NSNumber) == (b as? NSNumber)
    }
}

/// The schemas of richpush's JSON outputs, in `Samples/schemas/`.
package enum OutputSchemas {
    package static let folder = Fixtures.root + "/Samples/schemas"

    /// The violations of `text` (one JSON document) against `Samples/schemas/NAME.schema.json`; a
    /// parse failure is one violation.
    package static func violations(of text: String, against name: String) -> [String] {
        do {
            return try JSONSchemaCheck.violations(
                of: try JSONSchemaCheck.parse(text), schemaFile: folder + "/\(name).schema.json")
        } catch {
            return ["\(name): \(error)"]
        }
    }
}
