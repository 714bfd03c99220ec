import Foundation
import RichPush

/// JSON as batch files use it: snake_case keys, sorted.
///
/// Records, summaries and outcomes name their own snake_case keys (their `CodingKeys`), so they are
/// read with ``recordDecoder``, which converts nothing. ``decoder`` and ``pretty(_:)`` also convert
/// camelCase property names, for the types that do not name their keys yet (the bench report);
/// converting an already snake_case key leaves it as it is.
package enum BatchJSON {
    /// Reads types that name their own keys: records, summaries, outcomes.
    package static let recordDecoder = JSONDecoder()

    /// Reads types whose JSON keys are their property names converted to snake_case.
    package static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    /// Pretty-printed, sorted JSON with snake_case keys.
    package static func pretty<T: Encodable>(_ value: T) throws -> String {
        try encoder(pretty: true).encode(value).string
    }

    private static func encoder(pretty: Bool) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }
}

extension Data {
    fileprivate var string: String { String(decoding: self, as: UTF8.self) }
}
