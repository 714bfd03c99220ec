/// One push SDK's notification service extension, described as data: which keys it reads, which
/// pushes it handles, how it names the file, what it delivers when it fails or runs out of time.
///
/// The one pipeline (`ServiceExtension`) interprets a dialect; Braze (`Dialect.braze`, the
/// default) is a dialect like the others. An SDK whose extension has its own algorithm for reading
/// its media has its own file in `Dialect/Extensions` (Braze, OneSignal, Airship, notifee), written
/// like its source; the SDKs that read one URL share a reader (`MediaSource/Kind/url`). Each rule,
/// with its citation, is in `docs/sdks.md`: the facts come from each SDK's public source (`source`),
/// and a rule that is not stated anywhere is listed in `inferred`, which every outcome of the dialect
/// names.
///
/// ```swift
/// let dialect = Dialect.named("onesignal")      // nil for an unknown name
/// print(dialect?.title ?? "no such SDK")
/// ```
public struct Dialect: Sendable, Equatable {
    /// The `--sdk` name: lower case, no spaces.
    public var name: String
    /// The SDK's own name, for messages (`OneSignal`).
    public var title: String
    /// Where the behaviour was read (repository, file, commit).
    package var source: String
    /// Where the media request lives in the payload.
    package var media: MediaSource
    /// Top-level keys (dotted paths) the extension needs before it does anything; without them the
    /// push is shown as sent.
    package var gate: [String] = []
    /// What a push without every ``gate`` key gets.
    package var gateMissing: GateMissing = .notHandled
    /// Keys whose presence says the payload was written for this SDK (``DialectDetection``).
    package var markers: [String]
    /// How the extension picks the file's extension.
    package var naming: NamingRule
    /// The extensions the SDK accepts before handing the file to iOS; `nil`: no list.
    package var allowList: [String]? = nil
    /// Whether ``allowList`` is matched without lower-casing (OneSignal: `.JPG` is skipped).
    package var allowListIsCaseSensitive = false
    /// Whether outcomes carry Braze's advice on image size (at most 5 MB, about 500 KB recommended).
    package var advisesImageSize = false
    /// The SDK's own size check on the declared Content-Length, in bytes; `nil`: none.
    package var maxContentLength: Int64? = nil
    /// The download's timeout for the whole resource (Customer.io: 30 s); `nil`: the budget decides.
    package var resourceTimeout: Duration? = nil
    /// The most attachments the extension creates, and in what order.
    package var attachments: AttachmentPolicy = .single
    /// What the user sees when the media could not be attached.
    package var onFailure: Delivery
    /// What the user sees when the budget runs out.
    package var onExpiry: Delivery
    /// Content the extension changes in its best-attempt copy (buttons, category, badge), each when
    /// the payload carries one of its keys.
    package var bestAttemptChanges: [ContentChange] = []
    /// Text the media payload overrides (Airship's `content`, notifee's title and body), as key paths.
    package var textOverrides: TextOverrides? = nil
    /// Network calls the extension makes besides the download.
    package var networkCalls: [SDKCall] = []
    /// Rules of this description that no source states (inferred or unverified): each outcome lists them.
    package var inferred: [String] = []

    /// What a push without every gate key gets from the extension.
    package enum GateMissing: Sendable, Equatable {
        /// The extension does not handle it (it does not call the content handler; the app's code must).
        case notHandled
        /// The extension shows the original content, and the outcome says which key is missing
        /// (CleverTap, whose type key is part of its media request).
        case showsOriginal(ReasonCode)
    }

    /// How many attachments, and in what order iOS gets them.
    package enum AttachmentPolicy: String, Sendable, Equatable {
        /// One media item.
        case single
        /// Only the first element of a list (notifee).
        case firstOnly = "first-only"
        /// Every item, downloaded one after another; the order comes from a dictionary and is undefined (OneSignal).
        case sequentialUnordered = "sequential, unordered"
        /// Every item, downloaded at once, in completion order; one failure drops them all (Airship).
        case concurrentAllOrNothing = "concurrent, completion order, all-or-nothing"

        package var allowsSeveral: Bool { self == .sequentialUnordered || self == .concurrentAllOrNothing }
    }

    /// What reaches the screen when the extension gives up.
    package enum Delivery: String, Sendable, Equatable, Codable {
        /// The notification as sent (`request.content`).
        case original
        /// The SDK's mutable copy with its own changes (``bestAttemptChanges``), no media.
        case bestAttempt = "best-attempt"
        /// The content the SDK composed, when its image step had finished; otherwise the original (Customer.io).
        case composedIfReady = "composed-if-ready"
        /// Nothing: the extension never calls the content handler, and iOS shows the original after the budget.
        case appMustHandle = "app-must-handle"
    }

    /// Where a media payload's text overrides are.
    package struct TextOverrides: Sendable, Equatable {
        package var title: [String]
        package var subtitle: [String]?
        package var body: [String]
        /// Whether the overrides survive a failed download (Airship: no; notifee: yes, the copy carries them).
        package var keptOnFailure: Bool
        /// Whether a valid media payload with no media still applies them (Airship:
        /// `AirshipNotificationMutationProvider.swift@01e28d2:L37-L42`).
        package var appliesWithoutMedia = false
    }
}

/// A change an SDK makes to the content it delivers, when the payload carries one of `keys`.
package struct ContentChange: Sendable, Equatable {
    package var what: String
    /// Dotted key paths; any one present triggers the change.
    package var keys: [String]

    package init(_ what: String, keys: [String]) {
        self.what = what
        self.keys = keys
    }
}

/// Where a dialect reads its media request.
///
/// A struct of plain fields rather than an enum with payloads: the catalogue is static, and its
/// arrays stay visible to LeakSanitizer (an enum keeps its tag in a payload pointer's spare bits).
package struct MediaSource: Sendable, Equatable {
    package enum Kind: String, Sendable, Equatable {
        /// Braze's `ab.att` (``BrazeExtension``).
        case braze
        /// One string at a key path, with an optional declared type at another (and its default): the
        /// shared reader of the SDKs whose extension reads one URL.
        case url
        /// OneSignal's `att` dictionary, chosen by the payload's shape (``OneSignalExtension``).
        case oneSignal = "onesignal"
        /// Airship's `media_attachment`, decoded as its `Decodable` payload (``AirshipExtension``).
        case airship
        /// notifee's `attachments[0]`, else `image` (``NotifeeExtension``).
        case notifee
    }

    /// What an SDK that reads one URL does with a value of the wrong JSON type.
    package enum WrongType: String, Sendable, Equatable {
        /// The payload is refused with a reason (richpush's reading where the source does not settle it).
        case refused
        /// `as? String`: the value is treated as absent (the URL: no media; the type: the default).
        case ignored
        /// Used as a string without a check: the extension raises and iOS shows the push as sent.
        case raises
    }

    package var kind: Kind
    /// The key paths read, in order.
    package var paths: [[String]]
    /// Where the declared type or kind is, for ``Kind/url``.
    package var typePath: [String]? = nil
    /// The declared type when the payload has none (Klaviyo: `jpg`).
    package var defaultType: String? = nil
    /// What a URL or type of the wrong JSON type does (``Kind/url``).
    package var wrongType: WrongType = .refused
    /// Whether the dialect's gate keys must be strings, not only present (Customer.io).
    package var gateNeedsStrings = false

    package static let braze = MediaSource(
        kind: .braze, paths: [["ab", "att", "url"]], typePath: ["ab", "att", "type"])

    package static func url(
        path: [String], type: [String]? = nil, defaultType: String? = nil, wrongType: WrongType = .refused,
        gateNeedsStrings: Bool = false
    ) -> MediaSource {
        MediaSource(
            kind: .url, paths: [path], typePath: type, defaultType: defaultType, wrongType: wrongType,
            gateNeedsStrings: gateNeedsStrings)
    }

    package static let oneSignal = MediaSource(kind: .oneSignal, paths: [["os_data", "att"], ["att"]])

    package static let notifee = MediaSource(
        kind: .notifee, paths: [["notifee_options", "ios", "attachments", "0", "url"], ["notifee_options", "image"]])

    package static func airship(_ path: [String]) -> MediaSource { MediaSource(kind: .airship, paths: [path]) }

    /// The key paths, dotted, for `sdk list` and messages.
    package var keys: [String] {
        switch kind {
        case .braze, .url:
            return paths.map { $0.joined(separator: ".") } + (typePath.map { [$0.joined(separator: ".")] } ?? [])
        case .oneSignal, .notifee: return paths.map { $0.joined(separator: ".") }
        case .airship:
            let base = paths.first?.joined(separator: ".") ?? ""
            return [base + ".urls[].url", base + ".url"]
        }
    }
}

/// How an SDK picks the extension of the file it hands to `UNNotificationAttachment`.
package enum NamingRule: Sendable, Equatable {
    /// The declared type is the extension, read as Braze's API writes it (lower case, no dot) (Braze).
    case declaredType
    /// The declared type appended after a dot as written (Klaviyo: `.png` gives `name..png`).
    case declaredTypeAsWritten
    /// A declared kind mapped to an extension (CleverTap's image/video/audio), else the MIME type
    /// among a few, else nothing (`.`).
    case declaredKind(map: [String: String], mimeFallback: [String: String])
    /// Always the same extension (Expo's sample: `.jpg`).
    case fixed(String)
    /// `URLResponse.suggestedFilename`'s extension, else an `image/*` MIME subtype (`sanitised`:
    /// a subtype containing `/` or `+` is refused, as Firebase does; notifee takes it raw), or nothing;
    /// `stem` says how the file's name is made around it.
    case suggestedFilename(
        imageSubtypeFallback: SubtypeFallback, nameRequired: Bool = false, stem: SuggestedStem = .prefixed("-"))
    /// OneSignal: `?filename=` with a supported extension, else the MIME map, else the URL path
    /// extension, else any query item with a supported extension.
    case queryMIMEPath(mimeMap: [String: String])
    /// Airship: the remote last path component if it ends with a known extension (no dot needed),
    /// else a type hint from the MIME type, then from the bytes.
    case pathSuffixThenHint(mimeMap: [String: String])
    /// MoEngage 8.01.10: the Content-Type, else the URL path extension.
    case mimeThenPath(mimeMap: [String: String])

    /// How a `suggestedFilename` dialect makes the file's name.
    package enum SuggestedStem: Sendable, Equatable {
        /// A random stem, this separator, then the suggested name whole (Iterable `-`, Customer.io `_`).
        case prefixed(String)
        /// A random stem and only the suggested name's extension (Firebase, notifee).
        case extensionOnly
    }

    package enum SubtypeFallback: String, Sendable, Equatable {
        case none
        /// The subtype, refused when it contains `/` (Firebase 12.19.0). Firebase (`containsString:`)
        /// and notifee replace `image/` anywhere in the MIME type, so `x-image/png` gives `x-.png`.
        case sanitised
        /// `image/` replaced by `.`, with no check (notifee).
        case raw
    }

    /// One sentence for `sdk list`.
    package var summary: String {
        switch self {
        case .declaredType: return "the declared type is the extension"
        case .declaredTypeAsWritten: return "the declared type is appended after a dot, as written"
        case .declaredKind: return "declared kind (image .jpg, video .mp4, audio .mp3), else Content-Type jpeg/png/gif"
        case .fixed(let suffix): return "always .\(suffix)"
        case .suggestedFilename(let fallback, let required, _):
            var text = "URLResponse.suggestedFilename (Content-Disposition, else the URL's last path component)"
            switch fallback {
            case .none: break
            case .sanitised: text += ", else the image/* subtype (refused if it contains '/')"
            case .raw: text += ", else image/* with 'image/' replaced by '.' (unsanitised)"
            }
            return text + (required ? "; no name, no image" : "")
        case .queryMIMEPath: return "?filename= → Content-Type map → URL path extension → any query item"
        case .pathSuffixThenHint:
            return "remote last path component if it ends with a known extension (no dot checked), else a type hint "
                + "from Content-Type, then the bytes"
        case .mimeThenPath: return "Content-Type, else the URL path extension"
        }
    }
}
