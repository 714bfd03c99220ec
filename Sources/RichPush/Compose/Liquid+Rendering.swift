extension Liquid {
    /// The bytes a rendering may write, shared by every text charged to it.
    ///
    /// Braze refuses a push whose compact payload is over its limit, and every rendered text that
    /// goes into the payload is in it at least once, at least as long as rendered (JSON escaping only
    /// adds bytes). So once the texts charged to one budget pass the limit, the payload is over it,
    /// and rendering can stop there instead of building what would be refused.
    package struct Budget: Sendable {
        /// The most bytes the texts may take together.
        package let limit: Int
        /// Whether the budget is a whole message's, every text in it charged, rather than one text's own.
        package let whole: Bool
        /// The bytes written so far.
        package private(set) var spent = 0

        package init(limit: Int, whole: Bool = true) {
            self.limit = limit
            self.whole = whole
        }

        /// Takes `count` bytes, or returns false (taking nothing) when they would pass the limit.
        mutating func take(_ count: Int) -> Bool {
            guard count <= limit - spent else { return false }
            spent += count
            return true
        }
    }

    /// Why a rendering stopped before its end.
    package enum Interruption: Error, Equatable {
        /// The text `field` (a JSON path) would pass its budget's `limit`: `reached` bytes with the
        /// piece that did not fit; `whole` is the budget's ``Budget/whole``.
        case pastLimit(field: String, reached: Int, limit: Int, whole: Bool)
        /// The task was cancelled (Ctrl-C or SIGTERM in the CLI).
        case cancelled
    }

    /// Renders templates for one user, into a byte buffer.
    ///
    /// The user's attributes are looked up by name once, into tables, so a tag costs the same
    /// whatever the number of attributes. Without a user nothing is rendered: each text stays as
    /// written, and every tag is noted as left as written.
    package struct Renderer {
        /// How many tags to evaluate between two looks at the task's cancellation.
        package static let cancellationInterval = 1024

        private let rendering: Bool
        private var standard: [String: JSONValue] = [:]
        private var custom: [String: JSONValue] = [:]
        private var campaign: [String: JSONValue] = [:]
        private let checksCancellation: Bool
        private var output: [UInt8] = []
        /// How many tags were evaluated: a rendering its budget stops evaluates one past the last that fit.
        package private(set) var evaluations = 0
        /// The bytes copied into rendered texts.
        package private(set) var written = 0

        /// A renderer for `context`'s user (none: nothing is rendered); with `checksCancellation`,
        /// rendering stops with ``Interruption/cancelled`` once the current task is cancelled.
        package init(context: Context?, checksCancellation: Bool = false) {
            self.checksCancellation = checksCancellation
            rendering = context != nil
            guard let context else { return }
            // The last member of a name wins, as `JSONValue`'s subscript reads it.
            if case .object(let members) = context.user {
                for member in members { standard[member.key] = member.value }
            }
            if standard["user_id"] == nil, let id = standard["external_id"] { standard["user_id"] = id }
            if case .object(let members)? = context.user["custom_attributes"] {
                for member in members { custom[member.key] = member.value }
            }
            for member in context.campaign { campaign[member.key] = member.value }
        }

        /// `template` rendered, each byte charged to `budget`; its tags' fate added to `notes`.
        package mutating func render(_ template: Template, field: String, budget: inout Budget, notes: inout Notes)
            throws(Interruption) -> String
        {
            guard template.holdsLiquid else { return template.text }
            notes.holdsLiquid = true
            guard rendering else {
                try note(template, notes: &notes)
                return template.text
            }
            output.removeAll(keepingCapacity: true)
            for segment in template.segments {
                switch segment {
                case .literal(let text):
                    try append(text, field: field, budget: &budget)
                case .tag(let tag):
                    switch try evaluate(tag) {
                    case .value(let value):
                        try append(value, field: field, budget: &budget)
                    case .empty:
                        notes.empty.append(tag.source)
                    case .unrendered:
                        notes.unrendered.append(tag.source)
                        try append(tag.source, field: field, budget: &budget)
                    }
                }
            }
            return String(decoding: output, as: UTF8.self)
        }

        /// Adds `template`'s tags' fate to `notes` without rendering it: for a text no payload uses.
        mutating func note(_ template: Template, notes: inout Notes) throws(Interruption) {
            guard template.holdsLiquid else { return }
            notes.holdsLiquid = true
            for case .tag(let tag) in template.segments {
                switch try evaluate(tag) {
                case .value: break
                case .empty: notes.empty.append(tag.source)
                case .unrendered: notes.unrendered.append(tag.source)
                }
            }
        }

        private mutating func append(_ text: String, field: String, budget: inout Budget) throws(Interruption) {
            let count = text.utf8.count
            guard budget.take(count) else {
                throw .pastLimit(field: field, reached: budget.spent + count, limit: budget.limit, whole: budget.whole)
            }
            output.append(contentsOf: text.utf8)
            written += count
        }

        private enum Evaluation {
            case value(String)
            case empty
            case unrendered
        }

        private mutating func evaluate(_ tag: Template.Tag) throws(Interruption) -> Evaluation {
            evaluations += 1
            if checksCancellation, evaluations % Self.cancellationInterval == 0, Task.isCancelled {
                throw .cancelled
            }
            guard rendering, let expression = tag.expression else { return .unrendered }
            let found: JSONValue?
            switch expression.variable {
            case .standard(let name): found = standard[name]
            case .custom(let name): found = custom[name]
            case .campaign(let name): found = campaign[name]
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
            if text == nil { text = expression.fallback }
            return text.map { .value($0) } ?? .empty
        }
    }
}
