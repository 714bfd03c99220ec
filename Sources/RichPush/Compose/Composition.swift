/// What an outcome keeps of the request it was composed from (`process --braze-request`, `batch
/// --braze-requests`): the request's file, the payload exactly as composed, its headers, the
/// composer's warnings and the inferred rules it used. JSON: the outcome's `composed` member.
package struct Composition: Sendable, Decodable, Equatable {
    /// The request file as given (a batch item's name).
    package var request: String
    /// The composed payload's compact JSON text, byte for byte as transmitted.
    package var payload: String
    /// The APNs headers, by name.
    package var headers: [String: String]
    package var warnings: [Warning]
    /// The ``ComposeRule`` ids of the inferred rules used.
    package var inferred: [String]

    package init(request: String, push: ComposedPush) {
        self.request = request
        payload = String(decoding: push.bytes, as: UTF8.self)
        headers = Dictionary(push.headers.fields.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
        warnings = push.warnings
        inferred = push.rules.filter { ComposeRule.named($0)?.documented == false }
    }

    /// The `composed` object, in reading order (headers in the order APNs lists them).
    package var json: JSONValue {
        let order = ["apns-push-type", "apns-priority", "apns-expiration", "apns-collapse-id"]
        let named = headers.sorted {
            (order.firstIndex(of: $0.key) ?? 9, $0.key) < (order.firstIndex(of: $1.key) ?? 9, $1.key)
        }
        return .object([
            ("request", .string(request)), ("payload", .string(payload)),
            ("headers", .object(named.map { ($0.key, JSONValue.string($0.value)) })),
            ("warnings", .array(warnings.map(\.json))), ("inferred", .array(inferred.map { .string($0) })),
        ])
    }
}
