/// What the body of a `/users/track` answer says, read with checks: the `message`, the fatal
/// `errors` as text, and the non-fatal errors that name one object each (`input_array`, `index`).
///
/// Anything that is not JSON, or not the shape Braze documents, reads as nothing said. Every number
/// is converted with a check (an `index` of `1e3`, `-1` or `9e99` names no object); texts are cut
/// to ``maximumText`` characters and the error list to ``maximumErrors`` entries, so a hostile
/// answer cannot flood stderr. The body is already redacted of the API key (``TrackClient``).
///
/// ```swift
/// let response = TrackResponse(body: Array(#"{"message":"success","errors":[{"input_array":"events","index":0}]}"#.utf8))
/// response.refusals.first?.index  // 0
/// ```
package struct TrackResponse: Sendable, Equatable {
    /// A non-fatal error: the object at `index` of `array` (`events`, `attributes`, ...) was refused.
    package struct Refusal: Sendable, Equatable {
        package var array: String
        package var index: Int
        package var reason: String
    }

    /// The `message`, when it is a string.
    package var message: String?
    /// The entries of `errors`, as text (a string as it is, anything else as its JSON).
    package var errors: [String] = []
    /// How many entries `errors` has (before the cut to ``maximumErrors``).
    package var errorCount = 0
    /// The entries of `errors` that name one object.
    package var refusals: [Refusal] = []

    /// The longest text kept.
    package static let maximumText = 400
    /// The most error entries kept as text.
    package static let maximumErrors = 50

    package init(body: [UInt8]) {
        guard let json = try? JSONValue.parse(body) else { return }
        if case .string(let text)? = json["message"] { message = String(text.prefix(Self.maximumText)) }
        guard case .array(let list)? = json["errors"] else { return }
        errorCount = list.count
        for entry in list {
            if errors.count < Self.maximumErrors {
                let text: String = if case .string(let text) = entry { text } else { entry.text }
                errors.append(String(text.prefix(Self.maximumText)))
            }
            // Int(text) is nil for anything that is not a decimal integer in range.
            guard case .string(let array)? = entry["input_array"], case .number(let number)? = entry["index"],
                let index = Int(number), index >= 0
            else { continue }
            let reason: String =
                if case .string(let type)? = entry["type"] {
                    String(type.prefix(Self.maximumText))
                } else {
                    "rejected by the endpoint"
                }
            refusals.append(Refusal(array: String(array.prefix(Self.maximumText)), index: index, reason: reason))
        }
    }
}
