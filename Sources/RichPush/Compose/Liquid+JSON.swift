extension Liquid {
    /// What rendering a JSON value's strings found: the fields holding Liquid, and the tags left as
    /// written or rendered empty, each with its field.
    package struct Report: Sendable, Equatable {
        package var fields: [String] = []
        package var unrendered: [(field: String, tag: String)] = []
        package var empty: [(field: String, tag: String)] = []

        package static func == (lhs: Report, rhs: Report) -> Bool {
            lhs.fields == rhs.fields && lhs.unrendered.map(\.tag) == rhs.unrendered.map(\.tag)
                && lhs.unrendered.map(\.field) == rhs.unrendered.map(\.field)
                && lhs.empty.map(\.tag) == rhs.empty.map(\.tag)
        }

        /// The warnings a composed push carries for this report: one for Liquid left unrendered
        /// without a user, or one per kind of tag left as written or rendered empty.
        func warnings(rendered: Bool) -> [Warning] {
            guard !fields.isEmpty else { return [] }
            guard rendered else {
                return [
                    Warning(
                        "liquid-unrendered",
                        "Liquid in \(fields.joined(separator: ", ")) is left as written: the size is checked on the "
                            + "text as written, not on what each user gets. Give --user FILE to render it per user.")
                ]
            }
            var warnings: [Warning] = []
            if !unrendered.isEmpty {
                let named = Self.naming(unrendered)
                warnings.append(
                    Warning(
                        "liquid-left-as-written",
                        "richpush renders only the standard attributes, custom_attribute, campaign and the default "
                            + "filter; \(named) is left as written, so the size counts it as written. Check it in a "
                            + "test send."))
            }
            if !empty.isEmpty {
                let named = Self.naming(empty)
                warnings.append(
                    Warning(
                        "liquid-empty",
                        "\(named) has no value for this user and no default, so it renders empty. Add "
                            + "| default: '...' or the attribute."))
            }
            return warnings
        }

        /// The most distinct tags a warning names; the rest are counted.
        static let namedTags = 5

        /// `tag in field` for each distinct tag and field, in the order first seen, a repeated one with
        /// its count, at most ``namedTags`` of them and then how many more: a warning stays a line
        /// whatever the template (40,000 empty tags per user wrote 1.8 MB of warning per user).
        static func naming(_ tags: [(field: String, tag: String)]) -> String {
            var order: [String] = []
            var counts: [String: Int] = [:]
            for item in tags {
                let name = "\(item.tag) in \(item.field)"
                if counts[name] == nil { order.append(name) }
                counts[name, default: 0] += 1
            }
            var text = order.prefix(namedTags).map { name in
                let count = counts[name] ?? 1
                return count > 1 ? "\(name) (\(count) times)" : name
            }.joined(separator: ", ")
            if order.count > namedTags { text += " and \(order.count - namedTags) more" }
            return text
        }
    }

    /// A JSON value with the Liquid of its strings parsed once (``Template``), for rendering per user.
    ///
    /// A part that holds no Liquid stays the value it is; a string that does keeps its field's path
    /// (`apple_push.alert.body`), made once here rather than for every user.
    indirect enum Document: Sendable {
        /// Nothing below holds Liquid.
        case plain(JSONValue)
        /// A string holding Liquid, and the field it is in.
        case text(Template, field: String)
        case object([(key: String, value: Document)])
        case array([Document])

        /// `value` parsed; `path` names it in the report (`apple_push`).
        init(_ value: JSONValue, path: String) {
            var components: [String] = []
            self = Self.parse(value, root: path, components: &components)
        }

        private static func parse(_ value: JSONValue, root: String, components: inout [String]) -> Document {
            switch value {
            case .string(let text):
                let template = Template(text)
                guard template.holdsLiquid else { return .plain(value) }
                return .text(template, field: root + components.joined())
            case .object(let members):
                var parsed: [(key: String, value: Document)] = []
                var liquid = false
                for member in members {
                    components.append("." + member.key)
                    let document = parse(member.value, root: root, components: &components)
                    components.removeLast()
                    if case .plain = document {} else { liquid = true }
                    parsed.append((member.key, document))
                }
                return liquid ? .object(parsed) : .plain(value)
            case .array(let items):
                var parsed: [Document] = []
                var liquid = false
                for (index, item) in items.enumerated() {
                    components.append("[\(index)]")
                    let document = parse(item, root: root, components: &components)
                    components.removeLast()
                    if case .plain = document {} else { liquid = true }
                    parsed.append(document)
                }
                return liquid ? .array(parsed) : .plain(value)
            case .number, .bool, .null:
                return .plain(value)
            }
        }

        /// The value as written.
        var written: JSONValue {
            switch self {
            case .plain(let value): value
            case .text(let template, _): .string(template.text)
            case .object(let members): .object(members.map { ($0.key, $0.value.written) })
            case .array(let items): .array(items.map(\.written))
            }
        }
    }
}

extension Liquid.Renderer {
    /// `document` with every string rendered, each charged to `budget`; each text holding Liquid
    /// is added to `report`.
    mutating func render(_ document: Liquid.Document, budget: inout Liquid.Budget, report: inout Liquid.Report)
        throws(Liquid.Interruption) -> JSONValue
    {
        switch document {
        case .plain(let value):
            return value
        case .text(let template, let field):
            var notes = Liquid.Notes()
            let rendered = try render(template, field: field, budget: &budget, notes: &notes)
            report.add(notes, field: field)
            return .string(rendered)
        case .object(let members):
            var rendered: [(key: String, value: JSONValue)] = []
            rendered.reserveCapacity(members.count)
            for member in members {
                rendered.append((member.key, try render(member.value, budget: &budget, report: &report)))
            }
            return .object(rendered)
        case .array(let items):
            var rendered: [JSONValue] = []
            rendered.reserveCapacity(items.count)
            for item in items { rendered.append(try render(item, budget: &budget, report: &report)) }
            return .array(rendered)
        }
    }

    /// `document` as written, with its texts' tags added to `report` as rendering would find them:
    /// for a value that never reaches the payload, whose rendering nobody reads.
    mutating func note(_ document: Liquid.Document, report: inout Liquid.Report) throws(Liquid.Interruption)
        -> JSONValue
    {
        try noteTexts(document, report: &report)
        return document.written
    }

    private mutating func noteTexts(_ document: Liquid.Document, report: inout Liquid.Report)
        throws(Liquid.Interruption)
    {
        switch document {
        case .plain: return
        case .text(let template, let field):
            var notes = Liquid.Notes()
            try note(template, notes: &notes)
            report.add(notes, field: field)
        case .object(let members):
            for member in members { try noteTexts(member.value, report: &report) }
        case .array(let items):
            for item in items { try noteTexts(item, report: &report) }
        }
    }
}

extension Liquid.Report {
    /// One text's notes, under its field.
    mutating func add(_ notes: Liquid.Notes, field: String) {
        guard notes.holdsLiquid else { return }
        fields.append(field)
        unrendered += notes.unrendered.map { (field, $0) }
        empty += notes.empty.map { (field, $0) }
    }
}
