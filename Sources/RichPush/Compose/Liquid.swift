/// The part of Braze's Liquid richpush renders: the common personalisation tags, from one user's
/// attributes. Everything else is left as written and named.
///
/// Rendered: `{{${first_name}}}` and Braze's other standard attributes (``standardAttributes``),
/// `{{custom_attribute.${name}}}`, `{{campaign.${name}}}`, each optionally followed by
/// `| default: 'text'`. A tag whose value is missing (and has no default) renders empty, as Braze
/// does; a `{% ... %}` tag, any other filter or variable, and a value that is a list or object stay
/// as written, so the size checked for them is the text as written.
///
/// A text is parsed once (``Template``) and rendered per user into a byte buffer that stops at a
/// ``Budget``, so a short template cannot multiply a long value into more than the limit allows.
///
/// ```swift
/// let context = Liquid.Context(user: .object([("first_name", .string("Ada"))]))
/// let (text, notes) = Liquid.render("Hi {{${first_name} | default: 'there'}}", context: context)
/// ```
package enum Liquid {
    /// Braze's standard user attributes as Liquid names them (`${user_id}` is the external id).
    package static let standardAttributes: Set<String> = [
        "first_name", "last_name", "email_address", "phone_number", "user_id", "braze_id", "city", "country",
        "language", "gender", "date_of_birth", "time_zone", "most_recent_locale", "most_recent_app_version",
        "last_used_app_date",
    ]

    /// What the tags read: one user's attributes and the campaign's.
    package struct Context: Sendable {
        /// Standard attributes by their Liquid names, custom ones under `custom_attributes`.
        package var user: JSONValue
        /// `{{campaign.${name}}}` values (`api_id` is the request's `campaign_id`).
        package var campaign: [(key: String, value: JSONValue)]

        package init(user: JSONValue, campaign: [(key: String, value: JSONValue)] = []) {
            self.user = user
            self.campaign = campaign
            if case .object(let members)? = user["campaign"] { self.campaign = members + campaign }
        }
    }

    /// What happened to the tags of one text.
    package struct Notes: Sendable, Equatable {
        /// The text holds Liquid (`{{` or `{%`).
        package var holdsLiquid = false
        /// Tags kept as written, as they appear.
        package var unrendered: [String] = []
        /// Tags whose value is missing for this user and that have no default: rendered empty.
        package var empty: [String] = []

        package init() {}
    }

    /// Whether `text` holds Liquid at all.
    package static func holdsLiquid(_ text: String) -> Bool {
        text.contains("{{") || text.contains("{%")
    }

    /// `text` with the tags ``Liquid`` knows rendered for `context`; with no context, nothing is rendered.
    ///
    /// No limit applies here: the output is the template's text and one copy of a value per tag.
    package static func render(_ text: String, context: Context?) -> (String, Notes) {
        var renderer = Renderer(context: context)
        var budget = Budget(limit: .max)
        var notes = Notes()
        do {
            let rendered = try renderer.render(Template(text), field: "", budget: &budget, notes: &notes)
            return (rendered, notes)
        } catch {
            // Not reached: nothing is over an unlimited budget, and this renderer never checks for cancellation.
            return (text, notes)
        }
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
