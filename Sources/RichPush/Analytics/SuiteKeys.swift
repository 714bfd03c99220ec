/// The keys of an App Group suite that carry pending analytics, as the extension helper writes them.
public enum SuiteKeys {
    /// Array of dictionaries: `event_name` (a string) plus the event's properties.
    public static let customEvents = "pending_custom_events"
    /// Array of dictionaries, key to value; an array of strings is an array attribute.
    public static let customAttributes = "pending_custom_attributes"
    /// Array of `Data`, each a property-list-encoded keyed container such as `{"email": "..."}`.
    public static let userAttributes = "pending_user_attributes"
    /// The event name inside an event dictionary.
    public static let eventName = "event_name"
    /// The id of the last claim a flush made, written in the same replace that removed its items.
    public static let claimMarker = "richpush_flush_claim"

    /// The keys a suite may hold without being flagged.
    public static let known: Set<String> = [customEvents, customAttributes, userAttributes, claimMarker]
}
