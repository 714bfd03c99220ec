import Foundation
import RichPush

/// A known defect of the extension helpers, found in a suite.
package struct SuiteDefect: Sendable, Equatable, Codable {
    /// A stable name: `event-under-attributes`, `event-name-not-string`, `undecodable-user-attribute`,
    /// `unknown-key`, `unsupported-value`, `not-an-array`, `not-a-dictionary`.
    package var code: String
    /// What is wrong and what it causes.
    package var message: String

    package init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}

/// One pending item of a suite: an event, a custom attribute entry or a user attribute.
package struct SuiteEntry: Sendable, Equatable, Codable {
    /// Which kind of item the suite key says it is.
    package enum Kind: String, Sendable, Codable {
        case event
        case customAttribute = "custom_attribute"
        case userAttribute = "user_attribute"
    }

    /// A named value: an event property or an attribute (the `/users/track` client's ``TrackField``).
    package typealias Field = TrackField

    package var kind: Kind
    /// Its position in the suite key's array (0-based).
    package var index: Int
    /// The event's name, when it is a string.
    package var name: String?
    /// Event properties, or the attributes the entry sets, sorted by key.
    package var fields: [Field]
    /// What is wrong with it; an entry with a defect is never sent.
    package var defects: [SuiteDefect]

    /// The suite key it is stored under.
    package var suiteKey: String {
        switch kind {
        case .event: return SuiteKeys.customEvents
        case .customAttribute: return SuiteKeys.customAttributes
        case .userAttribute: return SuiteKeys.userAttributes
        }
    }

    /// Whether it can become a REST object as it is.
    package var isSendable: Bool { defects.isEmpty }
}

/// What a suite holds, decoded: the pending entries in order, and the defects seen.
package struct SuiteSnapshot: Sendable {
    /// Every entry of the three pending keys, events first, in suite order.
    package var entries: [SuiteEntry] = []
    /// Defects of the suite itself (unknown keys, a pending key that is not an array).
    package var suiteDefects: [SuiteDefect] = []
    /// The claim id of the last flush, when the suite carries one.
    package var claimMarker: String?

    /// Decodes the top-level dictionary of a suite.
    package init(root: [String: Any]) {
        claimMarker = root[SuiteKeys.claimMarker] as? String
        for key in root.keys.sorted() where !SuiteKeys.known.contains(key) {
            suiteDefects.append(
                SuiteDefect(
                    code: "unknown-key",
                    message: "'\(key)' is not a key the app reads (pending_custom_events, pending_custom_attributes, "
                        + "pending_user_attributes): a misspelled key is never sent"))
        }
        for key in [SuiteKeys.customEvents, SuiteKeys.customAttributes, SuiteKeys.userAttributes] {
            guard let value = root[key] else { continue }
            guard let array = value as? [Any] else {
                suiteDefects.append(
                    SuiteDefect(code: "not-an-array", message: "'\(key)' holds \(Self.kind(of: value)), not an array"))
                continue
            }
            for (index, element) in array.enumerated() {
                switch key {
                case SuiteKeys.customEvents: entries.append(Self.event(element, index: index))
                case SuiteKeys.customAttributes: entries.append(Self.customAttribute(element, index: index))
                default: entries.append(Self.userAttribute(element, index: index))
                }
            }
        }
    }

    /// The entries of one kind.
    package func entries(_ kind: SuiteEntry.Kind) -> [SuiteEntry] { entries.filter { $0.kind == kind } }

    /// Every defect: the suite's and each entry's.
    package var allDefects: [SuiteDefect] { suiteDefects + entries.flatMap(\.defects) }

    static func event(_ element: Any, index: Int) -> SuiteEntry {
        var entry = SuiteEntry(kind: .event, index: index, name: nil, fields: [], defects: [])
        guard let dictionary = element as? [String: Any] else {
            entry.defects.append(notADictionary(element, key: SuiteKeys.customEvents, index: index))
            return entry
        }
        switch dictionary[SuiteKeys.eventName] {
        case let text as String where !text.isEmpty:
            entry.name = text
        case nil:
            entry.defects.append(
                SuiteDefect(
                    code: "event-name-not-string",
                    message: "event \(index) has no event_name: the app drops it silently"))
        case let other?:
            entry.defects.append(
                SuiteDefect(
                    code: "event-name-not-string",
                    message: "event \(index) has event_name \(describe(other)), not a string: the app drops it silently"
                ))
        }
        (entry.fields, entry.defects) = fields(
            dictionary.filter { $0.key != SuiteKeys.eventName }, what: "event \(index)", defects: entry.defects)
        return entry
    }

    static func customAttribute(_ element: Any, index: Int) -> SuiteEntry {
        var entry = SuiteEntry(kind: .customAttribute, index: index, name: nil, fields: [], defects: [])
        guard let dictionary = element as? [String: Any] else {
            entry.defects.append(notADictionary(element, key: SuiteKeys.customAttributes, index: index))
            return entry
        }
        if dictionary[SuiteKeys.eventName] != nil {
            entry.name = dictionary[SuiteKeys.eventName] as? String
            entry.defects.append(
                SuiteDefect(
                    code: "event-under-attributes",
                    message: "custom attribute \(index) has event_name: an event saved under pending_custom_attributes "
                        + "(the Objective-C saveCustomEvent defect); the app would log it as attributes, not as an event"
                ))
        }
        (entry.fields, entry.defects) = fields(dictionary, what: "custom attribute \(index)", defects: entry.defects)
        return entry
    }

    static func userAttribute(_ element: Any, index: Int) -> SuiteEntry {
        var entry = SuiteEntry(kind: .userAttribute, index: index, name: nil, fields: [], defects: [])
        guard let decoded = UserAttributeCoding.decode(element) else {
            entry.defects.append(
                SuiteDefect(
                    code: "undecodable-user-attribute",
                    message: "user attribute \(index) is not a property-list-encoded keyed container such as "
                        + "{\"email\": ...}: the app cannot decode it and drops it"))
            return entry
        }
        entry.fields = [SuiteEntry.Field(key: decoded.key, value: .string(decoded.value))]
        return entry
    }

    private static func fields(_ dictionary: [String: Any], what: String, defects: [SuiteDefect]) -> (
        [SuiteEntry.Field], [SuiteDefect]
    ) {
        var fields: [SuiteEntry.Field] = []
        var defects = defects
        for key in dictionary.keys.sorted() {
            guard let raw = dictionary[key] else { continue }
            if let value = AnalyticsValue(propertyList: raw) {
                fields.append(SuiteEntry.Field(key: key, value: value))
            } else {
                defects.append(
                    SuiteDefect(
                        code: "unsupported-value",
                        message: "\(what): '\(key)' holds \(kind(of: raw)); Braze takes strings, numbers, booleans "
                            + "and arrays of strings"))
            }
        }
        return (fields, defects)
    }

    private static func notADictionary(_ element: Any, key: String, index: Int) -> SuiteDefect {
        SuiteDefect(code: "not-a-dictionary", message: "\(key)[\(index)] holds \(kind(of: element)), not a dictionary")
    }

    private static func describe(_ value: Any) -> String {
        if let parsed = AnalyticsValue(propertyList: value) { return parsed.display + " (\(parsed.typeName))" }
        return kind(of: value)
    }

    static func kind(of value: Any) -> String {
        switch value {
        case is String: return "a string"
        case let number as NSNumber: return AnalyticsValue.isBoolean(number) ? "a boolean" : "a number"
        case is Data: return "data"
        case is Date: return "a date"
        case is [String: Any]: return "a dictionary"
        case is [Any]: return "an array"
        default: return "a \(type(of: value))"
        }
    }
}

/// How a user attribute is stored: a property list of a keyed container with one key.
package enum UserAttributeCoding {
    /// The bytes the extension saves for `key` = `value` (a binary property list).
    package static func encode(key: String, value: String) throws(AnalyticsError) -> Data {
        do {
            return try PropertyListWriter.data([key: value], format: .binary)
        } catch {
            throw AnalyticsError(.invalidInput, "cannot encode the user attribute '\(key)': \(error)")
        }
    }

    /// Decodes a stored element: `Data` holding `{"email": "..."}` (or, as Swift's synthesized
    /// `Codable` writes an enum case, `{"email": {"_0": "..."}}`); `nil` when it is anything else.
    ///
    /// The bytes come from the suite, so they go through the bounded reader too
    /// (``PropertyListLimits/userAttribute``): a bomb stored as a user attribute is undecodable, not run.
    package static func decode(_ element: Any) -> (key: String, value: String)? {
        guard let data = element as? Data,
            let document = try? PropertyListReader(limits: .userAttribute).decode(
                [UInt8](data), path: "user attribute"),
            let dictionary = document.value as? [String: Any], dictionary.count == 1,
            let (key, inner) = dictionary.first,
            !key.isEmpty
        else { return nil }
        if let text = inner as? String { return (key, text) }
        if let wrapped = inner as? [String: Any], wrapped.count == 1, let text = wrapped["_0"] as? String {
            return (key, text)
        }
        return nil
    }
}
