/// `--sdk auto`: the dialect a payload was written for, from its own keys.
///
/// The dialects are tried in ``order``, and the first whose marker keys (``Dialect/markers``) the
/// payload carries wins; a payload with none of them is Braze's (the default). The order puts the
/// namespaced keys first (`com.urbanairship.*`, `CIO-Delivery-ID`, `os_data`, `notifee_options`,
/// `moengage`, `ct_mediaUrl`, `itbl`), Braze's `ab` before the generic `rich-media` (Klaviyo) and
/// `body._richContent` (Expo), and Firebase's `fcm_options`/`gcm.message_id` last, because a push
/// sent through FCM carries those keys whichever SDK's extension reads it.
///
/// ```swift
/// let dialect = DialectDetection.detect(try JSONValue.parse(bytes))   // .oneSignal for {"os_data": ...}
/// ```
package enum DialectDetection {
    /// The order in which `--sdk auto` tries the dialects.
    package static let order: [Dialect] = [
        .airship, .customerIO, .oneSignal, .notifee, .moEngage, .cleverTap, .iterable, .braze, .klaviyo, .expo,
        .firebase,
    ]

    /// The first dialect in ``order`` whose markers `root` carries; Braze when none does.
    package static func detect(_ root: JSONValue?) -> Dialect {
        guard let root, case .object = root else { return .braze }
        return order.first { $0.isMarked(in: root) } ?? .braze
    }
}

/// Which dialect a run uses: one for every payload, or each payload's own (`--sdk auto`).
public enum DialectChoice: Sendable, Equatable {
    case fixed(Dialect)
    case auto

    /// `--sdk NAME`'s value: a dialect's name or `auto`; nil for anything else.
    public init?(name: String) {
        if name.lowercased() == "auto" {
            self = .auto
        } else if let dialect = Dialect.named(name) {
            self = .fixed(dialect)
        } else {
            return nil
        }
    }

    /// The names `--sdk` takes, for messages and help.
    public static var names: [String] { Dialect.all.map(\.name) + ["auto"] }
}
