/// The `User-Agent` URLSession sends from a service extension: `<App>/<build> CFNetwork/<version> Darwin/<version>`.
///
/// CFNetwork builds it from the extension's bundle (its `CFBundleName`, else `CFBundleExecutable`, and
/// its `CFBundleVersion`) and the system's CFNetwork and Darwin versions. The defaults are those of an
/// iPhone on iOS 17.5 (CFNetwork 1496.0.7, Darwin 23.5.0) as server logs show them; Apple does not
/// document which CFNetwork version each iOS release carries. For another iOS major, the versions of
/// its release richpush has a source for (``versions``; docs/url-parsing-by-ios-version.md, section e):
/// 17.5 and 17.0's from the firmware, 15.6, 16.6 and 18.0 from User-Agent strings in public code.
///
/// ```swift
/// DeviceUserAgent(bundleName: "NotificationService", bundleVersion: "42").description
/// // "NotificationService/42 CFNetwork/1496.0.7 Darwin/23.5.0"
/// ```
package struct DeviceUserAgent: Sendable, Equatable, CustomStringConvertible {
    /// iOS 17.5's CFNetwork version.
    package static let cfNetworkVersion = "1496.0.7"
    /// iOS 17.5's Darwin (XNU) version.
    package static let darwinVersion = "23.5.0"
    /// The name used when the extension's bundle is unknown: Xcode's default target name for a service extension.
    package static let defaultBundleName = "NotificationService"
    /// The build used when the bundle gives none: Xcode's default `CURRENT_PROJECT_VERSION`.
    package static let defaultBundleVersion = "1"

    /// iOS major -> (CFNetwork, Darwin) of the release richpush has a source for.
    package static let versions: [Int: (cfNetwork: String, darwin: String)] = [
        15: ("1335.0.3", "21.6.0"), 16: ("1410.0.3", "22.6.0"), 17: (cfNetworkVersion, darwinVersion),
        18: ("1568.100.1", "24.0.0"),
    ]

    /// The product name (CFBundleName or CFBundleExecutable).
    package var bundleName: String
    /// The build number (CFBundleVersion).
    package var bundleVersion: String
    /// The CFNetwork and Darwin versions the phone's release carries.
    package var cfNetwork: String
    package var darwin: String

    /// A user agent for the bundle on `ios` (default 17.5); a name or version that is missing, empty or
    /// still an unexpanded Xcode build setting (`$(PRODUCT_NAME)`) gets the default, as the built
    /// product would carry a real one.
    package init(bundleName: String? = nil, bundleVersion: String? = nil, ios: IOSVersion? = nil) {
        self.bundleName = Self.usable(bundleName).map(Self.productToken) ?? Self.defaultBundleName
        self.bundleVersion = Self.usable(bundleVersion).map(Self.productToken) ?? Self.defaultBundleVersion
        let versions = ios.flatMap { Self.versions[$0.major] } ?? (Self.cfNetworkVersion, Self.darwinVersion)
        cfNetwork = versions.cfNetwork
        darwin = versions.darwin
    }

    /// `userAgent` with the CFNetwork and Darwin versions of `ios`'s release in place of those of
    /// another release richpush knows; any other User-Agent (one the user set) as it is.
    package static func retargeting(_ userAgent: String, to ios: IOSVersion) -> String {
        guard let target = versions[ios.major] else { return userAgent }
        for known in versions.values {
            let pair = " CFNetwork/\(known.cfNetwork) Darwin/\(known.darwin)"
            if userAgent.hasSuffix(pair) {
                return String(userAgent.dropLast(pair.count)) + " CFNetwork/\(target.cfNetwork) Darwin/\(target.darwin)"
            }
        }
        return userAgent
    }

    /// The header value.
    package var description: String {
        "\(bundleName)/\(bundleVersion) CFNetwork/\(cfNetwork) Darwin/\(darwin)"
    }

    private static func usable(_ text: String?) -> String? {
        guard let text, !text.isEmpty, !text.contains("$(") else { return nil }
        return text
    }

    /// CFNetwork percent-encodes what a product token cannot hold (spaces, `/`, non-ASCII), as
    /// "My%20App/1 CFNetwork/..." shows in server logs.
    private static func productToken(_ text: String) -> String {
        var token = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                token.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                token += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return token
    }
}
