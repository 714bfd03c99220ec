extension Liquid {
    /// One text's Liquid, parsed once for every user: the literal runs, and each tag with its
    /// expression already read, so rendering a user only looks values up and copies bytes.
    package struct Template: Sendable {
        /// A piece of the text, in order.
        enum Segment: Sendable {
            /// Text outside any tag, copied as it is.
            case literal(String)
            /// A `{{ ... }}` or `{% ... %}` tag (or one the text ends inside).
            case tag(Tag)
        }

        /// A tag as written, and what it reads.
        struct Tag: Sendable {
            /// The tag as written, from `{{` to `}}` (or to the end of an unclosed tag).
            var source: String
            /// What the tag renders, or nil when it stays as written whoever the user is.
            var expression: Expression?
        }

        /// A known variable followed by `default` filters only.
        struct Expression: Sendable {
            enum Variable: Sendable {
                case standard(String)
                case custom(String)
                case campaign(String)
            }

            var variable: Variable
            /// The first `default` filter's text, used when the value is missing or empty.
            var fallback: String?
        }

        /// The text as written.
        var text: String
        /// Whether the text holds Liquid (``Liquid/holdsLiquid(_:)``); without it, ``segments`` is empty.
        var holdsLiquid: Bool
        var segments: [Segment]
        /// How many tags the text holds.
        package var tags: Int

        /// Parses `text`: one pass over its bytes for the tags' bounds, then each tag's expression.
        package init(_ text: String) {
            self.text = text
            holdsLiquid = Liquid.holdsLiquid(text)
            segments = []
            tags = 0
            guard holdsLiquid else { return }
            // Every delimiter is ASCII, and no byte of a multi-byte UTF-8 sequence is, so the bytes
            // are cut only between whole characters.
            let bytes = Array(text.utf8)
            var literalStart = 0
            var index = 0
            while index < bytes.count {
                let opening = index + 1 < bytes.count && bytes[index] == UInt8(ascii: "{") ? bytes[index + 1] : nil
                guard opening == UInt8(ascii: "{") || opening == UInt8(ascii: "%") else {
                    index += 1
                    continue
                }
                if literalStart < index {
                    segments.append(.literal(String(decoding: bytes[literalStart..<index], as: UTF8.self)))
                }
                let statement = opening == UInt8(ascii: "%")
                let end = Self.closing(of: bytes, from: index + 2, statement: statement)
                let tagEnd = end ?? bytes.count
                let source = String(decoding: bytes[index..<tagEnd], as: UTF8.self)
                var expression: Expression?
                if !statement, end != nil {
                    expression = Self.expression(String(decoding: bytes[(index + 2)..<(tagEnd - 2)], as: UTF8.self))
                }
                segments.append(.tag(Tag(source: source, expression: expression)))
                tags += 1
                index = tagEnd
                literalStart = index
            }
            if literalStart < bytes.count {
                segments.append(.literal(String(decoding: bytes[literalStart...], as: UTF8.self)))
            }
        }

        /// The index just past the `}}` (or `%}`) that closes a tag opened before `start`, skipping
        /// `${...}` and quoted text; nil when the text ends first.
        private static func closing(of bytes: [UInt8], from start: Int, statement: Bool) -> Int? {
            var index = start
            var quote: UInt8?
            var inVariable = false
            let first = statement ? UInt8(ascii: "%") : UInt8(ascii: "}")
            while index < bytes.count {
                let byte = bytes[index]
                if let open = quote {
                    if byte == open { quote = nil }
                } else if inVariable {
                    if byte == UInt8(ascii: "}") { inVariable = false }
                } else if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") {
                    quote = byte
                } else if byte == UInt8(ascii: "$"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "{") {
                    inVariable = true
                    index += 1
                } else if byte == first, index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "}") {
                    return index + 2
                }
                index += 1
            }
            return nil
        }

        /// One `{{ ... }}` expression: a known variable, then `default` filters only; nil for anything else.
        private static func expression(_ inner: String) -> Expression? {
            let parts = splitOutsideQuotes(inner, on: "|").map { $0.trimmingSpaces }
            guard let head = parts.first else { return nil }
            let variable: Expression.Variable
            if let name = self.variable(head, prefix: "${") {
                guard standardAttributes.contains(name) else { return nil }
                variable = .standard(name)
            } else if let name = self.variable(head, prefix: "custom_attribute.${") {
                variable = .custom(name)
            } else if let name = self.variable(head, prefix: "campaign.${") {
                variable = .campaign(name)
            } else {
                return nil
            }
            var fallback: String?
            for filter in parts.dropFirst() {
                guard filter.hasPrefix("default"), let colon = filter.firstIndex(of: ":"),
                    filter[..<colon].trimmingSpaces == "default",
                    let text = quoted(filter[filter.index(after: colon)...].trimmingSpaces)
                else { return nil }
                // Once a default has given a value (even an empty one), the next ones have nothing to replace.
                if fallback == nil { fallback = text }
            }
            return Expression(variable: variable, fallback: fallback)
        }

        /// `name` from `prefix + name + "}"`.
        private static func variable(_ head: String, prefix: String) -> String? {
            guard head.hasPrefix(prefix), head.hasSuffix("}"), head.count > prefix.count + 1 else { return nil }
            let name = head.dropFirst(prefix.count).dropLast()
            guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == " " }) else {
                return nil
            }
            return String(name)
        }

        /// The text between matching single or double quotes that make up all of `text`.
        private static func quoted(_ text: String) -> String? {
            guard let first = text.first, first == "'" || first == "\"", text.count >= 2, text.last == first else {
                return nil
            }
            let body = text.dropFirst().dropLast()
            return body.contains(first) ? nil : String(body)
        }

        private static func splitOutsideQuotes(_ text: String, on separator: Character) -> [String] {
            var parts: [String] = []
            var current = ""
            var quote: Character?
            for character in text {
                if let open = quote {
                    if character == open { quote = nil }
                } else if character == "'" || character == "\"" {
                    quote = character
                } else if character == separator {
                    parts.append(current)
                    current = ""
                    continue
                }
                current.append(character)
            }
            parts.append(current)
            return parts
        }
    }
}
