extension SuiteEntry.Field {
    /// A field from `KEY=VALUE` as `--property` and `--attribute` take it; the value keeps its JSON type
    /// (``AnalyticsValue/init(commandLine:)``). Text without `=` or with an empty key is a usage error.
    public init(keyValue text: String) throws(SetupError) {
        guard let equals = text.firstIndex(of: "="), equals > text.startIndex else {
            throw .usage("'\(text)' is not KEY=VALUE")
        }
        self.init(
            key: String(text[..<equals]), value: AnalyticsValue(commandLine: String(text[text.index(after: equals)...]))
        )
    }
}

extension PendingRecord {
    /// What `analytics record` appends, in order: the event with its properties, each custom
    /// attribute, the email. Nothing at all, or properties without an event, is a usage error.
    public static func records(
        event: String?, properties: [SuiteEntry.Field], attributes: [SuiteEntry.Field], email: String?
    ) throws(SetupError) -> [PendingRecord] {
        guard event != nil || !properties.isEmpty || !attributes.isEmpty || email != nil else {
            throw .usage("nothing to record: give --event NAME, --attribute K=V or --email ADDRESS")
        }
        var records: [PendingRecord] = []
        if let event {
            records.append(.event(name: event, properties: properties))
        } else if !properties.isEmpty {
            throw .usage("--property belongs to an event: give --event NAME too")
        }
        records += attributes.map { .customAttribute(key: $0.key, value: $0.value) }
        if let email { records.append(.email(email)) }
        return records
    }
}
