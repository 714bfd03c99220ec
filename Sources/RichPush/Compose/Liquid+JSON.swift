extension Liquid {
    /// What rendering a JSON value's strings found: the fields holding Liquid, and the tags left as
    /// written or rendered empty, each with its field.
    public struct Report: Sendable, Equatable {
        public var fields: [String] = []
        public var unrendered: [(field: String, tag: String)] = []
        public var empty: [(field: String, tag: String)] = []

        public static func == (lhs: Report, rhs: Report) -> Bool {
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
                let named = unrendered.map { "\($0.tag) in \($0.field)" }.joined(separator: ", ")
                warnings.append(
                    Warning(
                        "liquid-left-as-written",
                        "richpush renders only the standard attributes, custom_attribute, campaign and the default "
                            + "filter; \(named) is left as written, so the size counts it as written. Check it in a "
                            + "test send."))
            }
            if !empty.isEmpty {
                let named = empty.map { "\($0.tag) in \($0.field)" }.joined(separator: ", ")
                warnings.append(
                    Warning(
                        "liquid-empty",
                        "\(named) has no value for this user and no default, so it renders empty. Add "
                            + "| default: '...' or the attribute."))
            }
            return warnings
        }
    }

    /// `value` with every string rendered for `context` (object keys are left alone); `path` names
    /// the value in the report (`apple_push.alert.body`).
    static func render(_ value: JSONValue, path: String, context: Context?, report: inout Report) -> JSONValue {
        switch value {
        case .string(let text):
            let (rendered, notes) = render(text, context: context)
            guard notes.holdsLiquid else { return value }
            report.fields.append(path)
            report.unrendered += notes.unrendered.map { (path, $0) }
            report.empty += notes.empty.map { (path, $0) }
            return .string(rendered)
        case .object(let members):
            return .object(
                members.map { ($0.key, render($0.value, path: path + "." + $0.key, context: context, report: &report)) }
            )
        case .array(let items):
            return .array(
                items.enumerated().map { render($1, path: path + "[\($0)]", context: context, report: &report) })
        case .number, .bool, .null:
            return value
        }
    }
}
