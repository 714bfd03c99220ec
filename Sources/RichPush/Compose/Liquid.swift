/// The part of Braze's Liquid richpush renders: the common personalisation tags, from one user's
/// attributes. Everything else is left as written and named.
///
/// Rendered: `{{${first_name}}}` and Braze's other standard attributes (``standardAttributes``),
/// `{{custom_attribute.${name}}}`, `{{campaign.${name}}}`, each optionally followed by
/// `| default: 'text'`. A tag whose value is missing (and has no default) renders empty, as Braze
/// does; a `{% ... %}` tag, any other filter or variable, and a value that is a list or object stay
/// as written, so the size checked for them is the text as written.
///
/// ```swift
/// let context = Liquid.Context(user: .object([("first_name", .string("Ada"))]))
/// let (text, notes) = Liquid.render("Hi {{${first_name} | default: 'there'}}", context: context)
/// ```
public enum Liquid {
    /// Braze's standard user attributes as Liquid names them (`${user_id}` is the external id).
    public static let standardAttributes: Set<String> = [
        "first_name", "last_name", "email_address", "phone_number", "user_id", "braze_id", "city", "country",
        "language", "gender", "date_of_birth", "time_zone", "most_recent_locale", "most_recent_app_version",
        "last_used_app_date",
    ]

    /// What the tags read: one user's attributes and the campaign's.
    public struct Context: Sendable {
        /// Standard attributes by their Liquid names, custom ones under `custom_attributes`.
        public var user: JSONValue
        /// `{{campaign.${name}}}` values (`api_id` is the request's `campaign_id`).
        public var campaign: [(key: String, value: JSONValue)]

        public init(user: JSONValue, campaign: [(key: String, value: JSONValue)] = []) {
            self.user = user
            self.campaign = campaign
            if case .object(let members)? = user["campaign"] { self.campaign = members + campaign }
        }

        func standard(_ name: String) -> JSONValue? {
            if let value = user[name] { return value }
            return name == "user_id" ? user["external_id"] : nil
        }
    }

    /// What happened to the tags of one text.
    public struct Notes: Sendable, Equatable {
        /// The text holds Liquid (`{{` or `{%`).
        public var holdsLiquid = false
        /// Tags kept as written, as they appear.
        public var unrendered: [String] = []
        /// Tags whose value is missing for this user and that have no default: rendered empty.
        public var empty: [String] = []
    }

    /// Whether `text` holds Liquid at all.
    public static func holdsLiquid(_ text: String) -> Bool {
        text.contains("{{") || text.contains("{%")
    }

    /// `text` with the tags ``Liquid`` knows rendered for `context`; with no context, nothing is rendered.
    public static func render(_ text: String, context: Context?) -> (String, Notes) {
        var notes = Notes()
        guard holdsLiquid(text) else { return (text, notes) }
        notes.holdsLiquid = true
        let characters = Array(text.unicodeScalars)
        var output = String.UnicodeScalarView()
        var index = 0
        while index < characters.count {
            let opening = index + 1 < characters.count && characters[index] == "{" ? characters[index + 1] : nil
            guard opening == "{" || opening == "%" else {
                output.append(characters[index])
                index += 1
                continue
            }
            let start = index
            let end = closing(of: characters, from: start + 2, statement: opening == "%")
            let tagEnd = end ?? characters.count
            let tag = String(String.UnicodeScalarView(characters[start..<tagEnd]))
            index = tagEnd
            if opening == "%" || end == nil {
                notes.unrendered.append(tag)
                output.append(contentsOf: tag.unicodeScalars)
                continue
            }
            let inner = String(String.UnicodeScalarView(characters[(start + 2)..<(tagEnd - 2)]))
            switch evaluate(inner, context: context) {
            case .value(let value):
                output.append(contentsOf: value.unicodeScalars)
            case .empty:
                notes.empty.append(tag)
            case .unrendered:
                notes.unrendered.append(tag)
                output.append(contentsOf: tag.unicodeScalars)
            }
        }
        return (String(output), notes)
    }

    /// The index just past the `}}` (or `%}`) that closes a tag opened before `start`, skipping
    /// `${...}` and quoted text; nil when the text ends first.
    private static func closing(of characters: [Unicode.Scalar], from start: Int, statement: Bool) -> Int? {
        var index = start
        var quote: Unicode.Scalar?
        var inVariable = false
        let first: Unicode.Scalar = statement ? "%" : "}"
        while index < characters.count {
            let character = characters[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if inVariable {
                if character == "}" { inVariable = false }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "$", index + 1 < characters.count, characters[index + 1] == "{" {
                inVariable = true
                index += 1
            } else if character == first, index + 1 < characters.count, characters[index + 1] == "}" {
                return index + 2
            }
            index += 1
        }
        return nil
    }

    private enum Evaluation {
        case value(String)
        case empty
        case unrendered
    }

    /// One `{{ ... }}` expression: a known variable, then `default` filters only.
    private static func evaluate(_ inner: String, context: Context?) -> Evaluation {
        guard let context else { return .unrendered }
        let parts = splitOutsideQuotes(inner, on: "|").map { $0.trimmingSpaces }
        guard let head = parts.first else { return .unrendered }
        let found: JSONValue?
        if let name = variable(head, prefix: "${") {
            guard standardAttributes.contains(name) else { return .unrendered }
            found = context.standard(name)
        } else if let name = variable(head, prefix: "custom_attribute.${") {
            found = context.user["custom_attributes"]?[name]
        } else if let name = variable(head, prefix: "campaign.${") {
            found = context.campaign.last { $0.key == name }?.value
        } else {
            return .unrendered
        }
        var text: String?
        switch found {
        case .string(let string)?: text = string
        case .number(let number)?: text = number
        case .bool(let flag)?: text = flag ? "true" : nil
        case .null?, nil: text = nil
        case .array?, .object?: return .unrendered
        }
        if text == "" { text = nil }
        for filter in parts.dropFirst() {
            guard filter.hasPrefix("default"), let colon = filter.firstIndex(of: ":"),
                filter[..<colon].trimmingSpaces == "default",
                let fallback = quoted(filter[filter.index(after: colon)...].trimmingSpaces)
            else { return .unrendered }
            if text == nil { text = fallback }
        }
        return text.map { .value($0) } ?? .empty
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

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }),
            let end = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })
        else { return "" }
        return String(String.UnicodeScalarView(scalars[start...end]))
    }
}
