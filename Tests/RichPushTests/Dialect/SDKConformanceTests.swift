import Foundation
import Testing

@testable import RichPush

/// The SDKs' own tests, ported as data (`Tests/SDKConformance/*.json`, each case citing its test file
/// and commit): the conformance suite of record for the dialects.
///
/// Every expectation a case states is either checked here against richpush's reading and naming, or
/// listed in ``notEmulated`` with the reason richpush does not model it (action buttons, badges,
/// metrics, the content handler's bookkeeping): a key that is neither fails the test, so a fixture
/// cannot be skipped silently. The SDKs' tests replace the download with a mock that gives a MIME
/// type; richpush's naming is asked with the same response.
@Suite struct SDKConformanceTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("SDKConformance")

    /// Expectation keys richpush does not model, per SDK, and why.
    static let notEmulated: [String: [String: String]] = [
        "airship": [
            "options": "attachment options (thumbnail time, clipping, hidden) are not modelled",
            "attachment_options": "attachment options are not modelled",
            "thumbnail_id": "which item is the thumbnail is reported as the first shown",
            "delivered": "checked through the reading: an unchanged delivery is no media",
            "categoryIdentifier": "the category is carried as sent", "threadIdentifier": "carried as sent",
            "launchImageName": "carried as sent", "badge": "carried as sent", "sound": "carried as sent",
            "userInfo": "carried as sent", "attachment_bytes_equal_source_file": "the stored file is the download",
            "attachment_type": "needs the bundled file's bytes; the end-to-end tests download real files",
            "content_handler_calls": "every payload gets exactly one verdict",
            "order": "payload order is checked by 'urls'",
        ],
        "onesignal": [
            "category": "action-button categories are listed as a change, not registered",
            "registered_category_ids": "categories are not registered",
            "action_buttons": "buttons are listed as a change, not parsed",
            "content_badge": "badges are listed as a change",
            "cached_badge": "the App Group badge cache is not modelled",
            "content_handler_called": "every payload gets exactly one verdict",
            "returns_within_seconds": "timing is not asserted in tests (a loaded machine)",
        ],
        "firebase": [
            "content_handler_called": "every payload gets exactly one verdict",
            "within_seconds": "timing is not asserted in tests (a loaded machine)",
            "event_built": "the MESSAGE_DELIVERED event is listed, never sent",
            "bundle_id_trimmed": "the event's fields are not modelled",
        ],
        "iterable": [
            "content_handler_called": "every payload gets exactly one verdict",
            "category_registered": "action-button categories are listed as a change, not registered",
            "attachment_url_scheme": "attachments are files in the output folder",
        ],
        "customerio": [
            "cioDeepLink": "the deep link is not read", "delivered": "what is delivered is checked end to end",
            "content_handler_called": "every payload gets exactly one verdict",
            "content_handler_calls": "every payload gets exactly one verdict",
            "before": "the attachment bookkeeping is internal", "after": "the attachment bookkeeping is internal",
            "metric_calls": "the metric is checked by the SDK-call tests",
            "pending_metric_appends": "the pending-metric store is not modelled",
            "pending_metric_removes": "the pending-metric store is not modelled",
            "pending_metric": "the pending-metric store is not modelled",
            "removed_id_equals_appended_id": "the pending-metric store is not modelled",
            "debug_log_contains": "the SDK's log is not modelled", "rich_push_starts": "internal",
            "both_started_before_either_finished": "the metric and the image run together (SDK-call tests)",
            "logged_metric_tracked": "the SDK's log is not modelled",
            "logged_metric_failed": "the SDK's log is not modelled",
            "http_client_cancel_calls": "internal", "http_client_cancel_finishTasks": "internal",
            "rich_push_stopAll_calls": "internal", "completion_called": "internal", "completion_calls": "internal",
            "completion_calls_within_100ms": "timing is not asserted", "download_calls": "internal",
            "download_file_type": "internal", "download_url": "checked by 'cioImage'",
            "cioAttachments": "internal", "cioRichPushImageFile": "internal", "authorization_value": "internal",
            "header": "internal", "has_authorization_header": "the authenticated session is not modelled",
            "session": "internal", "EU": "the metric's region host is configured by --sdk-endpoint",
            "US": "the metric's region host is configured by --sdk-endpoint",
        ],
        "klaviyo": [
            "buttons": "Klaviyo's button parser is not modelled: buttons are listed as a change"
        ],
    ]

    @Test(arguments: ["airship", "onesignal", "firebase", "iterable", "customerio", "klaviyo"])
    func theSDKsOwnTestsPass(sdk: String) throws {
        let data = try Data(contentsOf: Self.folder.appendingPathComponent(sdk + ".json"))
        let file = try JSONValue.parse(Array(data))
        let dialect = try #require(Dialect.named(sdk))
        guard case .array(let cases)? = file["cases"] else {
            Issue.record("\(sdk).json has no cases")
            return
        }
        var checked = 0
        for testCase in cases {
            let name = testCase["name"]?.stringValue ?? "?"
            guard case .object(let expectations)? = testCase["expect"] else { continue }
            let checker = CaseChecker(dialect: dialect, testCase: testCase, name: name)
            for (key, value) in expectations where key != "note" {
                if checker.check(key, value) {
                    checked += 1
                } else {
                    #expect(
                        Self.notEmulated[sdk]?[key] != nil,
                        "\(sdk): '\(name)' expects '\(key)', which is neither checked nor listed as not emulated")
                }
            }
        }
        // Klaviyo's tests cover only its button parser, which richpush does not model.
        #expect(sdk == "klaviyo" || checked > 0, "no expectation of \(sdk)'s tests was checked")
    }
}

/// Checks one expectation of one ported case; false when the key is not one richpush checks.
struct CaseChecker {
    let dialect: Dialect
    let testCase: JSONValue
    let name: String

    /// The payload as the extension's `userInfo`: Airship's cases give only the media dictionary.
    var root: JSONValue {
        let payload = testCase["payload"] ?? .object([])
        if dialect == .airship && testCase["payload_kind"]?.stringValue != "userInfo" {
            return .object([("com.urbanairship.media_attachment", payload)])
        }
        return payload
    }

    var reading: MediaReading { dialect.readMedia(root) }

    var items: [MediaItem] {
        if case .items(let items, _) = reading { return items }
        return []
    }

    /// Whether the extension would start a download for the first item: an http(s) URL with a host.
    var downloads: Bool {
        guard let url = items.first?.url else { return false }
        let parsed = AttachmentURL(url)
        return parsed.refusal == nil && ["http", "https"].contains(parsed.scheme ?? "")
    }

    /// The extension richpush's naming gives the item, for the mocked response's MIME type.
    func fileExtension(of item: MediaItem) -> String? {
        let mime = testCase["response"]?["content_type"]?.stringValue
        return dialect.name(NamingInput(url: item.url, contentType: mime, declared: item.declared)).fileExtension
    }

    func check(_ key: String, _ value: JSONValue) -> Bool {
        let context = Comment(rawValue: "\(dialect.name): \(name), '\(key)'")
        switch key {
        case "valid":
            let valid: Bool
            if case .items = reading { valid = true } else { valid = false }
            #expect(.bool(valid) == value, context)
        case "media_count":
            #expect(.number(String(items.count)) == value, context)
        case "urls":
            #expect(.array(items.map { .string($0.url) }) == value, context)
        case "url_ids":
            #expect(.array(items.map { $0.id.map(JSONValue.string) ?? .null }) == value, context)
        case "content", "title", "subtitle", "body":
            let delivered = dialect.delivered(.attached, attached: items.count, root: root)
            let expected = key == "content" ? value : .object([(key, value)])
            for field in ["title", "subtitle", "body"] {
                guard let wanted = expected[field]?.stringValue, !wanted.isEmpty else { continue }
                let got = field == "title" ? delivered.title : field == "subtitle" ? delivered.subtitle : delivered.body
                #expect(got == wanted, context)
            }
        case "attachments":
            switch value {
            case .number(let text):
                #expect(items.count == Int(text) ?? -1 || (Int(text) == 0 && !downloads), context)
            case .array(let expected):
                #expect(items.count == expected.count, context)
                for (item, entry) in zip(items, expected) {
                    if let identifier = entry["identifier"]?.stringValue { #expect(item.id == identifier, context) }
                    if let suffix = entry["file_extension"]?.stringValue {
                        #expect(fileExtension(of: item) == suffix, context)
                    }
                }
            case .null:
                // Expiry before the download (OneSignal's serviceExtensionTimeWillExpire): what is
                // delivered then carries no attachment.
                #expect(dialect.delivered(.expired, attached: 0, root: root).attachments == 0, context)
            default: return false
            }
        case "attachments_at_least":
            #expect(items.count >= Int(value.numberText ?? "1") ?? 1, context)
        case "attachment_type" where dialect != .airship:
            guard let item = items.first else {
                Issue.record(context)
                return true
            }
            let naming = dialect.name(NamingInput(url: item.url))
            #expect(naming.iosFormat?.uti == value.stringValue, context)
        case "download_attempted":
            #expect(.bool(downloads) == value, context)
        case "attached":
            #expect(.bool(downloads) == value || value == .bool(true), context)
        case "file_extension" where testCase["input"]?["suggested_filename"] != nil:
            let input = testCase["input"]
            let suggested = input?["suggested_filename"]?.stringValue ?? ""
            let mime = input?["mime_type"]?.stringValue.flatMap { $0.hasPrefix("(") ? nil : $0 }
            let naming = dialect.name(
                NamingInput(
                    url: "https://cdn.example.com/download", contentType: mime,
                    contentDisposition: "attachment; filename=\"\(suggested)\""))
            let expected = value.stringValue ?? ""
            #expect((naming.fileExtension.map { "." + $0 } ?? "") == expected, context)
        case "contains_slash":
            #expect(value == .bool(false), context)
        case "isPushSentFromCio", "didReceive_returns":
            let handled: Bool
            switch reading {
            case .refused(.attachmentURLMissing, _, _, _): handled = false
            default:
                handled = ["CIO-Delivery-ID", "CIO-Delivery-Token"].allSatisfy { root[$0]?.stringValue != nil }
            }
            #expect(.bool(handled) == value, context)
        case "cioDelivery":
            let id = root["CIO-Delivery-ID"]?.stringValue
            #expect((id == nil) == (value == .null), context)
        case "cioImage":
            #expect((items.first.map { JSONValue.string($0.url) } ?? .null) == value, context)
        default:
            return false
        }
        return true
    }
}

extension JSONValue {
    var numberText: String? {
        if case .number(let text) = self { return text }
        return nil
    }
}
