import Foundation

/// Who the REST objects are about: the `/users/track` identifier.
package enum UserIdentifier: Sendable, Equatable {
    case externalID(String)
    case brazeID(String)

    /// The identifier as a JSON member.
    var member: (key: String, value: JSONValue) {
        switch self {
        case .externalID(let id): return ("external_id", .string(id))
        case .brazeID(let id): return ("braze_id", .string(id))
        }
    }
}

/// One `/users/track` request body: at most ``TrackBody/limit`` events and as many attribute objects.
///
/// ```swift
/// let body = TrackBody(events: [event], attributes: [])
/// let json = body.json.text   // {"events":[{"external_id":"u1","name":"opened",...}]}
/// ```
package struct TrackBody: Sendable, Equatable {
    /// Braze's limit per array and request.
    package static let limit = 75

    package var events: [JSONValue]
    package var attributes: [JSONValue]

    package init(events: [JSONValue] = [], attributes: [JSONValue] = []) {
        self.events = events
        self.attributes = attributes
    }

    /// The request body as JSON (only the arrays that are not empty).
    package var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        if !attributes.isEmpty { members.append(("attributes", .array(attributes))) }
        if !events.isEmpty { members.append(("events", .array(events))) }
        return .object(members)
    }

    /// An event object: identifier, `name`, `time` (ISO 8601), `properties`.
    package static func event(
        name: String, time: String, properties: [TrackField], user: UserIdentifier
    ) -> JSONValue {
        .object([
            user.member, ("name", .string(name)), ("time", .string(time)),
            ("properties", .object(properties.map { ($0.key, $0.value.json) })),
        ])
    }

    /// An attributes object: identifier plus the attributes it sets.
    package static func attributes(_ fields: [TrackField], user: UserIdentifier) -> JSONValue {
        .object([user.member] + fields.map { ($0.key, $0.value.json) })
    }

    /// ISO 8601 with milliseconds, in UTC: `2026-11-30T11:20:00.123Z`.
    package static func timestamp(_ date: Date = Date()) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}

/// A delivery event for one payload, logged in real time for the user its `braze_id` names (path A).
package struct DeliveryEvent: Sendable, Equatable {
    package var brazeID: String
    package var properties: [TrackField]
    package var time: String

    package init(brazeID: String, properties: [TrackField], time: String = TrackBody.timestamp()) {
        self.brazeID = brazeID
        self.properties = properties
        self.time = time
    }
}

/// Path A: the `/users/track` requests that log one delivery event per payload.
package enum DeliveryTracking {
    /// The default event name.
    package static let defaultEventName = "rich_push_delivered"

    /// One event per delivery, for the user named by its `braze_id`, grouped into bodies of at most 75.
    package static func bodies(for deliveries: [DeliveryEvent], eventName: String = defaultEventName) -> [TrackBody] {
        let events = deliveries.map {
            TrackBody.event(name: eventName, time: $0.time, properties: $0.properties, user: .brazeID($0.brazeID))
        }
        return stride(from: 0, to: events.count, by: TrackBody.limit).map {
            TrackBody(events: Array(events[$0..<min($0 + TrackBody.limit, events.count)]))
        }
    }
}
