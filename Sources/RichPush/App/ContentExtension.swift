import Foundation

/// A content extension, from its Info.plist: which pushes it shows (by `aps.category`) and how.
package struct ContentExtension: Sendable, Equatable {
    /// The extension's name: its target folder (the folder that holds the Info.plist).
    package var name: String
    /// The plist it was read from.
    package var plist: String
    /// `UNNotificationExtensionCategory` (a string or an array of strings).
    package var categories: [String]
    /// `UNNotificationExtensionInitialContentSizeRatio`; required, `nil` when missing.
    package var initialContentSizeRatio: Double?
    package var defaultContentHidden: Bool
    package var overridesDefaultTitle: Bool
    /// `UNNotificationExtensionUserInteractionEnabled`: an interactive view (iOS 12 and later).
    package var userInteractionEnabled: Bool

    package init(
        name: String, plist: String, categories: [String], initialContentSizeRatio: Double? = 1,
        defaultContentHidden: Bool = false, overridesDefaultTitle: Bool = false, userInteractionEnabled: Bool = false
    ) {
        self.name = name
        self.plist = plist
        self.categories = categories
        self.initialContentSizeRatio = initialContentSizeRatio
        self.defaultContentHidden = defaultContentHidden
        self.overridesDefaultTitle = overridesDefaultTitle
        self.userInteractionEnabled = userInteractionEnabled
    }
}

/// A top-level key-value pair a content extension reads from the payload, and the JSON type it expects.
public struct RequiredKey: Sendable, Equatable, CustomStringConvertible {
    /// The JSON types a dashboard key-value pair can arrive as.
    public enum ValueType: String, Sendable, CaseIterable {
        case string, number, bool, array
    }

    public var key: String
    public var type: ValueType
    /// The content extension that reads it (its target folder); `nil`: every content extension.
    public var extensionName: String?

    public init(key: String, type: ValueType = .string, extensionName: String? = nil) {
        self.key = key
        self.type = type
        self.extensionName = extensionName
    }

    /// Parses `[EXTENSION:]KEY[=string|number|bool|array]` (the form a required key is given in).
    package init(parsing text: String) throws(AppConfigurationError) {
        var text = text
        var scope: String?
        if let colon = text.firstIndex(of: ":"), text.firstIndex(of: "=").map({ colon < $0 }) ?? true {
            scope = String(text[..<colon])
            text = String(text[text.index(after: colon)...])
            guard scope?.isEmpty == false else {
                throw AppConfigurationError(
                    path: "\(Setting.requireKey)", problem: "has an empty extension name before ':'")
            }
        }
        let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard let key = parts.first, !key.isEmpty else {
            throw AppConfigurationError(
                path: "\(Setting.requireKey)",
                problem: "needs [EXTENSION:]KEY or [EXTENSION:]KEY=string|number|bool|array")
        }
        var type = ValueType.string
        if parts.count == 2 {
            guard let parsed = ValueType(rawValue: parts[1]) else {
                throw AppConfigurationError(
                    path: "\(Setting.requireKey) \(text)",
                    problem: "has an unknown type; use string, number, bool or array")
            }
            type = parsed
        }
        self.init(key: key, type: type, extensionName: scope)
    }

    public var description: String { (extensionName.map { $0 + ":" } ?? "") + "\(key)=\(type.rawValue)" }

    func matches(_ value: JSONValue) -> Bool {
        switch (type, value) {
        case (.string, .string), (.number, .number), (.bool, .bool), (.array, .array): return true
        default: return false
        }
    }
}

/// Which expanded view the user gets for a push: a content extension, or the system's default.
package struct ContentOutcome: Sendable, Equatable, Decodable {
    package enum Kind: String, Sendable, Codable {
        /// A content extension shows the push.
        case shows
        /// The system's default expanded view shows it.
        case `default`
        /// The content extension that would show it crashes (a key it reads is missing or of another type).
        case wouldCrash = "would-crash"
        /// The app's content extensions are misconfigured for this category.
        case configurationError = "configuration-error"
    }

    package var outcome: Kind
    /// Stable kebab-case: `no-category`, `no-extension-for-category`, `braze-button-category`,
    /// `missing-key`, `wrong-type`, `duplicate-category`, `missing-initial-content-size-ratio`.
    package var reason: String?
    package var category: String?
    /// The extension that shows (or would crash).
    package var extensionName: String?
    package var interactive: Bool?
    package var initialContentSizeRatio: Double?
    package var defaultContentHidden: Bool?
    /// For `missing-key` and `wrong-type`.
    package var key: String?
    package var message: String
    /// A likely fix (a category that differs only in case or spaces).
    package var hint: String?

    enum CodingKeys: String, CodingKey {
        case outcome, reason, category, interactive, key, message, hint
        case extensionName = "extension"
        case initialContentSizeRatio = "initial_content_size_ratio"
        case defaultContentHidden = "default_content_hidden"
    }

    /// The `content_extension` member of reports.
    package var json: JSONValue {
        var members: [(String, JSONValue)] = [("outcome", .string(outcome.rawValue))]
        if let reason { members.append(("reason", .string(reason))) }
        if let category { members.append(("category", .string(category))) }
        if let extensionName { members.append(("extension", .string(extensionName))) }
        if let interactive { members.append(("interactive", .bool(interactive))) }
        if let initialContentSizeRatio {
            members.append(("initial_content_size_ratio", .number(String(initialContentSizeRatio))))
        }
        if let defaultContentHidden { members.append(("default_content_hidden", .bool(defaultContentHidden))) }
        if let key { members.append(("key", .string(key))) }
        members.append(("message", .string(message)))
        if let hint { members.append(("hint", .string(hint))) }
        return .object(members)
    }
}

/// Routes pushes to content extensions by `aps.category`, as iOS does.
package struct ContentRouter: Sendable, Equatable {
    /// Braze's default button categories: they show the system's view with Braze's buttons.
    package static let brazeButtonCategories: Set<String> = [
        "ab_cat_accept_decline", "ab_cat_yes_no", "ab_cat_confirm_cancel", "ab_cat_more",
    ]

    package var extensions: [ContentExtension]
    /// Key-value pairs the content extensions read from the payload.
    package var requiredKeys: [RequiredKey]

    package init(extensions: [ContentExtension], requiredKeys: [RequiredKey] = []) {
        self.extensions = extensions
        self.requiredKeys = requiredKeys
    }

    /// The expanded view for a payload whose top level is `root`.
    package func route(_ root: JSONValue?) -> ContentOutcome {
        guard case .string(let category)? = root?["aps"]?["category"], !category.isEmpty else {
            return ContentOutcome(
                outcome: .default, reason: "no-category",
                message: "the payload has no aps.category: the system's default expanded view shows it")
        }
        let claiming = extensions.filter { $0.categories.contains(category) }
        if claiming.count > 1 {
            return ContentOutcome(
                outcome: .configurationError, reason: "duplicate-category", category: category,
                message:
                    "\(claiming.map(\.name).joined(separator: " and ")) both claim the category '\(category)' "
                    + "in UNNotificationExtensionCategory: give each category to one content extension")
        }
        guard let shown = claiming.first else {
            if Self.brazeButtonCategories.contains(category) {
                return ContentOutcome(
                    outcome: .default, reason: "braze-button-category", category: category,
                    message: "'\(category)' is a Braze button category: the default view shows with Braze's buttons")
            }
            var outcome = ContentOutcome(
                outcome: .default, reason: "no-extension-for-category", category: category,
                message: "no content extension claims the category '\(category)': the default view shows it")
            let folded = Self.folded(category)
            if let near = extensions.flatMap({ extensionCategories in
                extensionCategories.categories.map { (extensionCategories.name, $0) }
            }).first(where: { Self.folded($0.1) == folded }) {
                outcome.hint =
                    "\(near.0) claims '\(near.1)', which differs only in case or spaces; categories must match "
                    + "exactly: send '\(near.1)' from the dashboard"
            }
            return outcome
        }
        var outcome = ContentOutcome(
            outcome: .shows, category: category, extensionName: shown.name, interactive: shown.userInteractionEnabled,
            initialContentSizeRatio: shown.initialContentSizeRatio, defaultContentHidden: shown.defaultContentHidden,
            message: "the content extension \(shown.name) shows the push (category '\(category)')")
        guard shown.initialContentSizeRatio != nil else {
            outcome.outcome = .configurationError
            outcome.reason = "missing-initial-content-size-ratio"
            outcome.message =
                "\(shown.name)'s Info.plist has no UNNotificationExtensionInitialContentSizeRatio, which iOS "
                + "requires: add it (a number, for example 1)"
            return outcome
        }
        for required in requiredKeys where required.extensionName == nil || required.extensionName == shown.name {
            guard let value = root?[required.key] else {
                outcome.outcome = .wouldCrash
                outcome.reason = "missing-key"
                outcome.key = required.key
                outcome.message =
                    "\(shown.name) reads the key-value pair '\(required.key)' and the payload has none: "
                    + "an extension that force-casts it (as Braze's personalized sample does) crashes"
                return outcome
            }
            guard required.matches(value) else {
                outcome.outcome = .wouldCrash
                outcome.reason = "wrong-type"
                outcome.key = required.key
                outcome.message =
                    "\(shown.name) reads '\(required.key)' as a \(required.type.rawValue) and the payload has "
                    + "\(value.typeName): a cast with `as! \(Self.swiftType(required.type))` crashes"
                return outcome
            }
        }
        return outcome
    }

    private static func folded(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    private static func swiftType(_ type: RequiredKey.ValueType) -> String {
        switch type {
        case .string: return "String"
        case .number: return "NSNumber"
        case .bool: return "Bool"
        case .array: return "[Any]"
        }
    }
}
