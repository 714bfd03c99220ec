import RichPush

extension SuiteEntry.Field {
    /// A field from `KEY=VALUE` (an event property, a custom attribute); the value keeps its JSON type
    /// (``AnalyticsValue/init(commandLine:)``). Text without `=` or with an empty key is `invalid-value`.
    package init(keyValue text: String) throws(ConfigurationError) {
        guard let equals = text.firstIndex(of: "="), equals > text.startIndex else {
            throw ConfigurationError(.invalidValue, "'\(text)' is not KEY=VALUE")
        }
        self.init(
            key: String(text[..<equals]), value: AnalyticsValue(commandLine: String(text[text.index(after: equals)...]))
        )
    }
}

extension PendingRecord {
    /// What `analytics record` appends, in order: the event with its properties, each custom
    /// attribute, the email. Nothing at all, or properties without an event, is `invalid-combination`.
    package static func records(
        event: String?, properties: [SuiteEntry.Field], attributes: [SuiteEntry.Field], email: String?
    ) throws(ConfigurationError) -> [PendingRecord] {
        guard event != nil || !properties.isEmpty || !attributes.isEmpty || email != nil else {
            throw ConfigurationError(
                .invalidCombination,
                "nothing to record: give \(Setting.event) NAME, \(Setting.attribute) K=V or \(Setting.email) ADDRESS")
        }
        var records: [PendingRecord] = []
        if let event {
            records.append(.event(name: event, properties: properties))
        } else if !properties.isEmpty {
            throw ConfigurationError(
                .invalidCombination, "\(Setting.property) belongs to an event: give \(Setting.event) NAME too")
        }
        records += attributes.map { .customAttribute(key: $0.key, value: $0.value) }
        if let email { records.append(.email(email)) }
        return records
    }
}
