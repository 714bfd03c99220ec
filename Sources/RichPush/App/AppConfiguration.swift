import Foundation

/// What an app's own files decide beyond the payload: the service extension's App Transport Security
/// and the content extensions that show pushes by category.
///
/// Read from an app's folder (``reading(folder:)``: the app's and its extensions' `Info.plist` files, those
/// whose `NSExtension.NSExtensionPointIdentifier` is a notification extension point kept), or from plists named
/// one by one (``reading(servicePlist:contentPlists:)``). XML and binary plists both work.
public struct AppConfiguration: Sendable, Equatable {
    /// The service extension's extension point.
    public static let serviceExtensionPoint = "com.apple.usernotifications.service"
    /// A content extension's extension point.
    public static let contentExtensionPoint = "com.apple.usernotifications.content-extension"

    /// The service extension's plist, if one was found or given.
    public var servicePlist: String?
    /// Its `NSAppTransportSecurity` (the default when no service plist is known).
    package var transportSecurity = AppTransportSecurity()
    package var contentExtensions: [ContentExtension] = []
    /// The service extension's product name, which CFNetwork puts first in its User-Agent: its
    /// `CFBundleName`, else `CFBundleExecutable` (`DeviceUserAgent` ignores an unexpanded `$(...)`).
    public var bundleName: String?
    /// The service extension's `CFBundleVersion` (its build number, the User-Agent's second part).
    public var bundleVersion: String?
    /// The SDK the service extension was built with, from the keys Xcode writes into a built product's
    /// Info.plist: `DTSDKName` (`iphoneos17.5`), else `DTPlatformVersion` (`17.5`); nil in a source
    /// folder's plist, which has neither, or for a version richpush has no facts for.
    package var linkedSDK: IOSVersion?

    public init() {}

    /// The notification extensions of the app in `folder` (an Xcode project checkout), as `--app` reads
    /// them. A folder or plist that cannot be used is `unusable-input`; one given to the wrong option,
    /// `invalid-value`, with the file and the defect in the message.
    public static func reading(folder: String) throws(ConfigurationError) -> AppConfiguration {
        do { return try scan(folder: folder) } catch { throw ConfigurationError(error) }
    }

    /// The extensions whose `Info.plist` files are given one by one (`--service-plist`, `--content-plist`).
    public static func reading(servicePlist: String?, contentPlists: [String]) throws(ConfigurationError)
        -> AppConfiguration
    {
        do { return try AppConfiguration(servicePlist: servicePlist, contentPlists: contentPlists) } catch {
            throw ConfigurationError(error)
        }
    }

    /// Reads the plists given directly (the service extension's and the content extensions').
    package init(servicePlist: String?, contentPlists: [String]) throws(AppConfigurationError) {
        if let servicePlist {
            let plist = try PropertyList(contentsOf: servicePlist)
            try Self.expect(plist, Self.serviceExtensionPoint, setting: .servicePlist)
            self.servicePlist = servicePlist
            transportSecurity = AppTransportSecurity(PropertyList.dictionary(plist.root, "NSAppTransportSecurity"))
            (bundleName, bundleVersion) = Self.bundleIdentity(plist)
            linkedSDK = Self.linkedSDK(plist)
        }
        for path in contentPlists {
            let plist = try PropertyList(contentsOf: path)
            try Self.expect(plist, Self.contentExtensionPoint, setting: .contentPlist)
            contentExtensions.append(try Self.contentExtension(plist))
        }
    }

    /// Finds and reads the app's and its extensions' Info.plist files in `folder` (an Xcode project's
    /// source folder or a built `.app`), as ``AppFolderWalk`` decides, and keeps the notification extensions.
    ///
    /// Vendored code, build products and hidden folders are skipped, the walk is bounded in depth and
    /// in entries, and links are not followed. Each plist is read through the bounded
    /// ``PropertyListReader``; a malformed one among them is an error that names it; a folder with no
    /// notification extension says what was looked for.
    package static func scan(folder: String) throws(AppConfigurationError) -> AppConfiguration {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw AppConfigurationError(
                .unusableInput, path: folder, problem: "is not a folder (\(Setting.app) takes the app's source folder)")
        }
        var configuration = AppConfiguration()
        let plists = try AppFolderWalk.infoPlists(in: folder)
        for path in plists {
            let plist = try PropertyList(contentsOf: path)
            switch extensionPoint(plist) {
            case serviceExtensionPoint?:
                if let existing = configuration.servicePlist {
                    throw AppConfigurationError(
                        path: path,
                        problem:
                            "is a second service extension (the first is \(existing)): name the one to use with "
                            + "\(Setting.servicePlist)")
                }
                configuration.servicePlist = path
                configuration.transportSecurity = AppTransportSecurity(
                    PropertyList.dictionary(plist.root, "NSAppTransportSecurity"))
                (configuration.bundleName, configuration.bundleVersion) = bundleIdentity(plist)
                configuration.linkedSDK = linkedSDK(plist)
            case contentExtensionPoint?:
                configuration.contentExtensions.append(try contentExtension(plist))
            default:
                continue
            }
        }
        guard configuration.servicePlist != nil || !configuration.contentExtensions.isEmpty else {
            throw AppConfigurationError(
                .unusableInput, path: folder,
                problem:
                    "holds no Info.plist whose NSExtension.NSExtensionPointIdentifier is \(serviceExtensionPoint) "
                    + "or \(contentExtensionPoint) (looked at \(plists.count) Info.plist files)")
        }
        return configuration
    }

    /// The name and build CFNetwork's User-Agent carries for the bundle.
    private static func bundleIdentity(_ plist: PropertyList) -> (name: String?, version: String?) {
        let name =
            PropertyList.string(plist.root, "CFBundleName") ?? PropertyList.string(plist.root, "CFBundleExecutable")
        return (name, PropertyList.string(plist.root, "CFBundleVersion"))
    }

    /// `DTSDKName` without its platform prefix (`iphoneos17.5`), else `DTPlatformVersion`.
    static func linkedSDK(_ plist: PropertyList) -> IOSVersion? {
        if let name = PropertyList.string(plist.root, "DTSDKName"), name.lowercased().hasPrefix("iphoneos"),
            let version = IOSVersion(parsing: String(name.dropFirst("iphoneos".count)))
        {
            return version
        }
        return PropertyList.string(plist.root, "DTPlatformVersion").flatMap { IOSVersion(parsing: $0) }
    }

    private static func extensionPoint(_ plist: PropertyList) -> String? {
        PropertyList.dictionary(plist.root, "NSExtension").flatMap {
            PropertyList.string($0, "NSExtensionPointIdentifier")
        }
    }

    private static func expect(_ plist: PropertyList, _ point: String, setting: Setting) throws(AppConfigurationError) {
        let found = extensionPoint(plist)
        guard found == point else {
            let what =
                found.map { "is for the extension point \($0)" } ?? "has no NSExtension.NSExtensionPointIdentifier"
            throw AppConfigurationError(
                path: plist.path, problem: "\(what), not \(point): it does not go with \(setting)")
        }
    }

    private static func contentExtension(_ plist: PropertyList) throws(AppConfigurationError) -> ContentExtension {
        let attributes =
            PropertyList.dictionary(plist.root, "NSExtension").flatMap {
                PropertyList.dictionary($0, "NSExtensionAttributes")
            } ?? [:]
        let categories: [String]
        switch attributes["UNNotificationExtensionCategory"] {
        case let text as String:
            categories = [text]
        case let list as [Any]:
            let strings = list.compactMap { $0 as? String }
            guard strings.count == list.count else {
                throw AppConfigurationError(
                    .unusableInput, path: plist.path,
                    problem: "has a UNNotificationExtensionCategory array with a non-string item")
            }
            categories = strings
        case nil:
            throw AppConfigurationError(
                .unusableInput, path: plist.path,
                problem: "has no NSExtensionAttributes.UNNotificationExtensionCategory, which iOS requires")
        default:
            throw AppConfigurationError(
                .unusableInput, path: plist.path,
                problem: "has a UNNotificationExtensionCategory that is neither a string nor an array"
            )
        }
        let name = URL(fileURLWithPath: plist.path).deletingLastPathComponent().lastPathComponent
        return ContentExtension(
            name: name, plist: plist.path, categories: categories,
            initialContentSizeRatio: PropertyList.number(attributes, "UNNotificationExtensionInitialContentSizeRatio"),
            defaultContentHidden: PropertyList.bool(attributes, "UNNotificationExtensionDefaultContentHidden") ?? false,
            overridesDefaultTitle: PropertyList.bool(attributes, "UNNotificationExtensionOverridesDefaultTitle")
                ?? false,
            userInteractionEnabled: PropertyList.bool(attributes, "UNNotificationExtensionUserInteractionEnabled")
                ?? false)
    }
}
