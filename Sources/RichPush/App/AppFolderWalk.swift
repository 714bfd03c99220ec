import Foundation

/// Finds the Info.plist files of an app and its extensions in an app's folder, and no others.
///
/// The app's folder is an Xcode project's source folder or a built `.app` bundle. What it needs is the
/// app's Info.plist and its extensions' (the extension point inside each decides which is which), so
/// the walk reads:
///
/// - in a source folder, `Info.plist` files at most ``maximumDepth`` folders down (a target's folder,
///   or a group inside it), skipping hidden folders, build products and vendored code (`Pods`,
///   `Carthage`, `vendor`, `node_modules`, frameworks and bundles);
/// - in a built `.app`, its own `Info.plist` and `PlugIns/*.appex/Info.plist`, nothing else inside it;
/// - in an `.appex`, its `Info.plist`.
///
/// Links are never followed (a link cannot lead the walk out of the folder), and the walk looks at
/// no more than ``maximumEntries`` names: a folder larger than that is refused with a message that
/// says to name the plists instead.
///
/// ```swift
/// let plists = try AppFolderWalk.infoPlists(in: "MyApp")  // ["MyApp/Service/Info.plist", ...]
/// ```
enum AppFolderWalk {
    /// How many folders below the given one an Info.plist may be (`App/Sources/Service/Info.plist` is 3 down).
    static let maximumDepth = 4
    /// How many names the walk looks at before it gives up on the folder.
    static let maximumEntries = 20_000

    /// Folders that never hold an app's or an extension's own Info.plist.
    static let skipped: Set<String> = [
        "build", "Build", "DerivedData", "Pods", "Carthage", "node_modules", "vendor", "Vendor", "third_party",
        "ThirdParty", "SourcePackages", "Frameworks",
    ]
    /// Folder suffixes whose contents are someone else's bundles or Xcode's own files.
    static let skippedSuffixes = [
        ".framework", ".xcframework", ".bundle", ".xcodeproj", ".xcworkspace", ".xcassets", ".lproj", ".playground",
        ".dSYM",
    ]

    /// The Info.plist paths to read below `folder`, sorted; `limit` is how many names the walk looks at
    /// (``maximumEntries`` but in tests).
    static func infoPlists(in folder: String, limit: Int = maximumEntries) throws(AppConfigurationError) -> [String] {
        var found: [String] = []
        var entries = 0
        if isBundle(folder) {
            collectBundle(folder, into: &found)
            return found.sorted()
        }
        var pending: [(path: String, depth: Int)] = [(folder, 0)]
        while let (current, depth) = pending.popLast() {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: current) else { continue }
            entries += names.count
            guard entries <= limit else {
                throw AppConfigurationError(
                    .unusableInput, path: folder,
                    problem: "holds more than \(limit) files and folders within \(maximumDepth) levels: "
                        + "give the app's source folder (the one holding its .xcodeproj), or name the plists with "
                        + "\(Setting.servicePlist) and \(Setting.contentPlist)")
            }
            for name in names where !name.hasPrefix(".") {
                let path = current + "/" + name
                var info = stat()
                guard lstat(path, &info) == 0 else { continue }
                switch info.st_mode & S_IFMT {
                case S_IFREG where name == "Info.plist":
                    found.append(path)
                case S_IFDIR where isBundle(name):
                    collectBundle(path, into: &found)
                case S_IFDIR
                where depth < maximumDepth && !skipped.contains(name)
                    && !skippedSuffixes.contains(where: { name.hasSuffix($0) }):
                    pending.append((path, depth + 1))
                default:
                    continue
                }
            }
        }
        return found.sorted()
    }

    static func isBundle(_ name: String) -> Bool { name.hasSuffix(".app") || name.hasSuffix(".appex") }

    /// A built bundle's Info.plist, and for an app, its extensions' under `PlugIns`.
    static func collectBundle(_ bundle: String, into found: inout [String]) {
        if isRegularFile(bundle + "/Info.plist") { found.append(bundle + "/Info.plist") }
        guard bundle.hasSuffix(".app") else { return }
        let plugIns = bundle + "/PlugIns"
        var info = stat()
        guard lstat(plugIns, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR,
            let names = try? FileManager.default.contentsOfDirectory(atPath: plugIns)
        else { return }
        for name in names.prefix(maximumEntries) where name.hasSuffix(".appex") {
            let appex = plugIns + "/" + name
            guard lstat(appex, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { continue }
            if isRegularFile(appex + "/Info.plist") { found.append(appex + "/Info.plist") }
        }
    }

    /// Whether `path` is a regular file itself (not through a link).
    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }
}
