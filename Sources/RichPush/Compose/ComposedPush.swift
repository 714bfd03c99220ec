/// The platform whose send request is read: Braze's `/messages/send`, OneSignal's `POST /notifications`,
/// or Airship's push API.
public enum ComposeDialect: String, Sendable, CaseIterable {
    case braze, onesignal, airship
}

/// How a request is read.
package struct ComposeOptions: Sendable {
    package var dialect: ComposeDialect = .braze
    /// The message comes from a dashboard campaign or Canvas step: Braze's 3,807-byte limit (a warning)
    /// applies instead of the API's 1,912 bytes, no audience is checked, and `"$json:{...}"` extras are JSON.
    package var dashboard = false

    package init(dialect: ComposeDialect = .braze, dashboard: Bool = false) {
        self.dialect = dialect
        self.dashboard = dashboard
    }
}

/// The APNs request headers a composed push implies.
package struct APNsHeaders: Sendable, Equatable {
    package var pushType: ExtensionPolicy.PushType
    /// `apns-priority`; nil leaves it out (APNs then uses 10).
    package var priority: Int?
    /// `apns-expiration`, seconds since 1970.
    package var expiration: Int64?
    /// `apns-collapse-id`.
    package var collapseID: String?

    package init(
        pushType: ExtensionPolicy.PushType, priority: Int? = nil, expiration: Int64? = nil, collapseID: String? = nil
    ) {
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
    }

    /// Header names and values, as HTTP/2 sends them (lower-case names), in a fixed order.
    package var fields: [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = [("apns-push-type", pushType.rawValue)]
        if let priority { fields.append(("apns-priority", String(priority))) }
        if let expiration { fields.append(("apns-expiration", String(expiration))) }
        if let collapseID { fields.append(("apns-collapse-id", collapseID)) }
        return fields
    }

    /// The headers as one JSON object of strings.
    package var json: JSONValue { .object(fields.map { ($0.name, JSONValue.string($0.value)) }) }
}

/// A request composed into what the device receives: the payload as a sender transmits it (compact
/// JSON), its headers, the warnings, where Liquid is, and the rules used.
public struct ComposedPush: Sendable, Equatable {
    package var payload: JSONValue
    /// The payload's compact JSON bytes: what goes on the wire, and what the size limits count.
    public var bytes: [UInt8]
    package var headers: APNsHeaders
    /// What is worth knowing and changes nothing (`liquid-unrendered`, `buttons-without-category`).
    public var warnings: [Warning]
    /// The request's fields that hold Liquid (`apple_push.alert.body`), rendered or not.
    public var liquidFields: [String]
    /// The mapping rules this request used, in the table's order (`richpush compose --explain`).
    public var rules: [String]

    /// The payload as JSON text, as the sender transmits it.
    public var payloadText: String { String(decoding: bytes, as: UTF8.self) }

    /// The APNs headers (`apns-push-type`, `apns-priority`, ...), lower-case names, in a fixed order.
    public var headerFields: [(name: String, value: String)] { headers.fields }

    package init(
        payload: JSONValue, headers: APNsHeaders, warnings: [Warning] = [], liquidFields: [String] = [],
        rules: [String] = []
    ) {
        self.payload = payload
        self.bytes = payload.utf8
        self.headers = headers
        self.warnings = warnings
        self.liquidFields = liquidFields
        let used = Set(rules)
        self.rules = ComposeRule.all.map(\.id).filter { used.contains($0) }
    }

    /// The envelope line `compose --envelope` writes: headers, payload, its size, warnings, Liquid
    /// fields and the inferred rules used (`Samples/schemas/compose-envelope.schema.json`).
    package func envelope(user: Int? = nil) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        if let user { members.append(("user", .number(String(user)))) }
        members += [
            ("headers", headers.json), ("payload", payload), ("payload_bytes", .number(String(bytes.count))),
            ("warnings", .array(warnings.map(\.json))), ("liquid", .array(liquidFields.map { .string($0) })),
            ("inferred", .array(rules.filter { ComposeRule.named($0)?.documented == false }.map { .string($0) })),
        ]
        return .object(members)
    }

    /// The line `compose --envelope` writes for a refused request (or user).
    package static func envelope(refusal: ComposeRefusal, user: Int? = nil) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        if let user { members.append(("user", .number(String(user)))) }
        members.append(("refusal", refusal.json))
        return .object(members)
    }
}
