import Foundation
import Testing

@testable import RichPush

/// Routing pushes to content extensions by `aps.category`, and the key-value pairs they need.
@Suite struct ContentRouterTests {
    static let game = ContentExtension(
        name: "NotificationContent", plist: "a", categories: ["match_game", "trivia"], initialContentSizeRatio: 0.5,
        userInteractionEnabled: true)
    static let personal = ContentExtension(
        name: "PersonalizedContent", plist: "b", categories: ["personalized"], initialContentSizeRatio: 1)
    static let router = ContentRouter(
        extensions: [game, personal],
        requiredKeys: [RequiredKey(key: "cert_title"), RequiredKey(key: "level", type: .number)])

    static func payload(_ category: String?, _ extra: String = "") -> JSONValue? {
        let aps = category.map { #"{"alert":"x","category":"\#($0)"}"# } ?? #"{"alert":"x"}"#
        return try? JSONValue.parse(Array(#"{"aps":\#(aps)\#(extra)}"#.utf8))
    }

    @Test func showsTheExtensionThatClaimsTheCategoryFromAnArray() {
        let outcome = ContentRouter(extensions: [Self.game, Self.personal]).route(Self.payload("trivia"))
        #expect(outcome.outcome == .shows)
        #expect(outcome.extensionName == "NotificationContent")
        #expect(outcome.interactive == true)
        #expect(outcome.initialContentSizeRatio == 0.5)
    }

    @Test func defaultViewWithoutACategoryOrAClaim() {
        #expect(Self.router.route(Self.payload(nil)).reason == "no-category")
        let unclaimed = Self.router.route(Self.payload("sale"))
        #expect(unclaimed.outcome == .default && unclaimed.reason == "no-extension-for-category")
        #expect(unclaimed.hint == nil)
    }

    @Test(arguments: ["Match_Game", " match_game", "MATCH_GAME "])
    func aNearMissInCaseOrSpacesIsTheDefaultViewWithAHint(category: String) throws {
        let outcome = Self.router.route(Self.payload(category))
        #expect(outcome.outcome == .default)
        let hint = try #require(outcome.hint)
        #expect(hint.contains("'match_game'"))
    }

    @Test func brazeButtonCategoriesShowTheDefaultViewWithButtons() {
        let outcome = Self.router.route(Self.payload("ab_cat_yes_no"))
        #expect(outcome.outcome == .default && outcome.reason == "braze-button-category")
    }

    @Test func twoExtensionsClaimingOneCategoryIsAConfigurationError() {
        var other = Self.personal
        other.name = "Other"
        other.categories = ["trivia"]
        let outcome = ContentRouter(extensions: [Self.game, other]).route(Self.payload("trivia"))
        #expect(outcome.outcome == .configurationError && outcome.reason == "duplicate-category")
    }

    @Test func aMissingInitialSizeRatioIsAConfigurationError() {
        var broken = Self.personal
        broken.initialContentSizeRatio = nil
        let outcome = ContentRouter(extensions: [broken]).route(Self.payload("personalized"))
        #expect(outcome.reason == "missing-initial-content-size-ratio")
    }

    @Test func requiredKeysMissingOrOfAnotherTypeWouldCrash() {
        let missing = Self.router.route(Self.payload("personalized"))
        #expect(missing.outcome == .wouldCrash && missing.reason == "missing-key" && missing.key == "cert_title")
        let wrong = Self.router.route(Self.payload("personalized", #","cert_title":42,"level":3"#))
        #expect(wrong.outcome == .wouldCrash && wrong.reason == "wrong-type" && wrong.key == "cert_title")
        let present = Self.router.route(Self.payload("personalized", #","cert_title":"Gold","level":3"#))
        #expect(present.outcome == .shows)
        #expect(present.json["extension"] == .string("PersonalizedContent"))
    }

    @Test func parsesRequiredKeysAndRefusesUnknownTypes() throws {
        #expect(try RequiredKey(parsing: "cert_title") == RequiredKey(key: "cert_title", type: .string))
        #expect(try RequiredKey(parsing: "level=number") == RequiredKey(key: "level", type: .number))
        #expect(throws: AppConfigurationError.self) { try RequiredKey(parsing: "level=int") }
        #expect(throws: AppConfigurationError.self) { try RequiredKey(parsing: "=string") }
        #expect(
            try RequiredKey(parsing: "PersonalizedContent:cert_title=string")
                == RequiredKey(key: "cert_title", type: .string, extensionName: "PersonalizedContent"))
        // A key for one extension does not make another crash.
        let scoped = ContentRouter(
            extensions: [Self.game, Self.personal],
            requiredKeys: [RequiredKey(key: "cert_title", extensionName: "PersonalizedContent")])
        #expect(scoped.route(Self.payload("trivia")).outcome == .shows)
        #expect(scoped.route(Self.payload("personalized")).outcome == .wouldCrash)
    }
}
