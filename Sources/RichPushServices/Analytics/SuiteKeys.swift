import RichPush

/// The keys of an App Group suite that carry pending analytics, as the extension helper writes them.
package enum SuiteKeys {
    /// Array of dictionaries: `event_name` (a string) plus the event's properties.
    package static let customEvents = "pending_custom_events"
    /// Array of dictionaries, key to value; an array of strings is an array attribute.
    package static let customAttributes = "pending_custom_attributes"
    /// Array of `Data`, each a property-list-encoded keyed container such as `{"email": "..."}`.
    package static let userAttributes = "pending_user_attributes"
    /// The event name inside an event dictionary.
    package static let eventName = "event_name"
    /// The id of the last claim a flush made, written in the same replace that removed its items.
    package static let claimMarker = "richpush_flush_claim"

    /// The keys a suite may hold without being flagged.
    package static let known: Set<String> = [customEvents, customAttributes, userAttributes, claimMarker]
}
