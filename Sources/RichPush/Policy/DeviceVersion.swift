/// An iOS version: the phone's, or the SDK an extension was linked against (`16`, `17.5`).
///
/// richpush knows the versions it has facts for (``supportedMajors``): what `URL(string:)` does
/// there (docs/url-parsing-by-ios-version.md) and the CFNetwork and Darwin versions its User-Agent
/// names (``DeviceUserAgent``).
package struct IOSVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    package var major: Int
    package var minor: Int

    /// The majors richpush has facts for.
    package static let supportedMajors = [15, 16, 17, 18]

    package init(_ major: Int, _ minor: Int = 0) {
        self.major = major
        self.minor = minor
    }

    /// `16`, `16.4` or `17.5.1` (the patch is read and dropped); nil for anything else, or a major
    /// richpush has no facts for.
    package init?(parsing text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 3 }),
            let major = Int(parts[0]), let minor = parts.count > 1 ? Int(parts[1]) : 0,
            parts.count < 3 || Int(parts[2]) != nil, minor >= 0, Self.supportedMajors.contains(major)
        else { return nil }
        self.init(major, minor)
    }

    package var description: String { "\(major).\(minor)" }

    package static func < (lhs: IOSVersion, rhs: IOSVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }
}

/// Which parser `URL(string:)` runs (docs/url-parsing-by-ios-version.md).
package enum URLParser: String, Sendable {
    /// RFC 1738/1808, before iOS 17 or for an app linked against an SDK before 17: a string with a
    /// character outside its table gives nil; a string it accepts is kept as written.
    case rfc1738
    /// RFC 3986, for an app linked on or after iOS 17 on iOS 17 or later: characters it cannot keep
    /// are percent-encoded, a non-ASCII host becomes its `xn--` form.
    case rfc3986
}

/// The phone a payload is judged for: its iOS version and the SDK its service extension was linked
/// against. Apple: "For apps linked on or after iOS 17 and aligned OS versions, URL parsing has updated
/// from the obsolete RFC 1738/1808 parsing to the same RFC 3986 parsing as URLComponents"
/// (developer.apple.com/documentation/foundation/url/init(string:)), so both decide the parser.
///
/// The default is iOS 17.5 built with the 17.5 SDK: the newest version whose CFNetwork version
/// richpush has from the firmware, and the one its rules were taken from. Every later version parses
/// URLs the same way.
///
/// ```swift
/// DeviceVersion(ios: IOSVersion(18), linkedSDK: IOSVersion(16)).urlParser  // .rfc1738
/// ```
public struct DeviceVersion: Sendable, Hashable, CustomStringConvertible {
    package var ios: IOSVersion
    package var linkedSDK: IOSVersion

    /// iOS 17.5, linked against the 17.5 SDK.
    public static let standard = DeviceVersion(ios: IOSVersion(17, 5))

    /// The phone running iOS `ios` (`"16"`, `"17.5"`) with an extension linked against `linkedSDK` (by
    /// default the same version); nil for a version richpush does not model (15 to 18 are).
    public init?(ios: String, linkedSDK: String? = nil) {
        guard let version = IOSVersion(parsing: ios) else { return nil }
        guard let linkedSDK else {
            self.init(ios: version)
            return
        }
        guard let sdk = IOSVersion(parsing: linkedSDK) else { return nil }
        self.init(ios: version, linkedSDK: sdk)
    }

    /// The phone on `ios`, its extension linked against `linkedSDK` (by default the same version: an
    /// app built with the SDK of the phone's release).
    package init(ios: IOSVersion, linkedSDK: IOSVersion? = nil) {
        self.ios = ios
        self.linkedSDK = linkedSDK ?? ios
    }

    /// The parser `URL(string:)` runs in the extension.
    package var urlParser: URLParser {
        ios.major >= 17 && linkedSDK.major >= 17 ? .rfc3986 : .rfc1738
    }

    /// `iOS 16.0`, or `iOS 18.0 (extension linked against the 16.0 SDK)`.
    public var description: String {
        linkedSDK == ios ? "iOS \(ios)" : "iOS \(ios) (extension linked against the \(linkedSDK) SDK)"
    }

    /// The phones `process --ios all` judges: each version richpush has facts for, built with its own
    /// SDK (the releases its User-Agent table names), and the newest on an extension linked against
    /// the 16 SDK (an app not rebuilt since).
    public static let every: [DeviceVersion] = [
        DeviceVersion(ios: IOSVersion(15, 6)), DeviceVersion(ios: IOSVersion(16, 6)), .standard,
        DeviceVersion(ios: IOSVersion(18, 0)), DeviceVersion(ios: IOSVersion(18, 0), linkedSDK: IOSVersion(16, 6)),
    ]

    /// The phones `URL(string:)` returns nil for a string the RFC 1738/1808 parser refuses, in words.
    public static let legacyPhones =
        "iOS 16 and earlier, and any iOS for an extension linked against an SDK before 17"
}
