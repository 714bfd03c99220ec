import Foundation
import RichPush

/// What an extension saves after a user acts: one item appended to a suite key.
package enum PendingRecord: Sendable, Equatable {
    /// A custom event and its properties (`pending_custom_events`).
    case event(name: String, properties: [SuiteEntry.Field])
    /// A custom attribute (`pending_custom_attributes`).
    case customAttribute(key: String, value: AnalyticsValue)
    /// The user's email, a user attribute (`pending_user_attributes`).
    case email(String)
}

/// Appends records to a suite the way the extension helper does, but under the suite's lock.
///
/// ```swift
/// try SuiteRecorder.record([.event(name: "opened", properties: [])], in: suite)
/// ```
package enum SuiteRecorder {
    /// Appends every record in one read-modify-write; returns the pending counts afterwards
    /// (events, custom attributes, user attributes).
    @discardableResult
    package static func record(_ records: [PendingRecord], in suite: AppGroupSuite) throws(AnalyticsError) -> (
        events: Int, customAttributes: Int, userAttributes: Int
    ) {
        var encoded: [(key: String, element: Any)] = []
        for record in records {
            switch record {
            case .event(let name, let properties):
                guard !name.isEmpty else { throw AnalyticsError(.invalidInput, "an event needs a non-empty name") }
                var dictionary: [String: Any] = [SuiteKeys.eventName: name]
                for field in properties {
                    guard field.key != SuiteKeys.eventName, !field.key.isEmpty else {
                        throw AnalyticsError(
                            .invalidInput, "a property cannot be named '\(field.key)'; choose another name")
                    }
                    dictionary[field.key] = field.value.propertyList
                }
                encoded.append((SuiteKeys.customEvents, dictionary))
            case .customAttribute(let key, let value):
                guard !key.isEmpty, key != SuiteKeys.eventName else {
                    throw AnalyticsError(.invalidInput, "a custom attribute cannot be named '\(key)'")
                }
                encoded.append((SuiteKeys.customAttributes, [key: value.propertyList] as [String: Any]))
            case .email(let address):
                encoded.append((SuiteKeys.userAttributes, try UserAttributeCoding.encode(key: "email", value: address)))
            }
        }
        return try suite.update { root throws(AnalyticsError) in
            for (key, element) in encoded {
                let existing = root[key] ?? [Any]()
                guard var array = existing as? [Any] else {
                    throw AnalyticsError(
                        .suiteUnreadable,
                        "'\(key)' in '\(suite.path)' is not an array; fix or remove it before recording more")
                }
                array.append(element)
                root[key] = array
            }
            return (
                (root[SuiteKeys.customEvents] as? [Any])?.count ?? 0,
                (root[SuiteKeys.customAttributes] as? [Any])?.count ?? 0,
                (root[SuiteKeys.userAttributes] as? [Any])?.count ?? 0
            )
        }
    }
}
