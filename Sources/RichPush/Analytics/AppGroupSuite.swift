import Foundation

/// One `UserDefaults` suite of an App Group container, as the device keeps it: the property list
/// `<container>/Library/Preferences/<suite>.plist` (binary on a device or simulator).
///
/// Every change is a read-modify-write under an exclusive `flock` on a lock file beside the plist
/// (``update(_:)``), and the new plist replaces the old one by a rename from an exclusive temporary
/// in the same folder, so an extension and an app that write at once lose nothing and a reader never
/// sees half a file. Foundation's `PropertyListSerialization` reads and writes the file.
///
/// ```swift
/// let suite = try AppGroupSuite(container: "Samples/app-group", suite: nil)
/// try suite.update { root in root["pending_custom_events"] = [["event_name": "opened"]] }
/// ```
public struct AppGroupSuite: Sendable {
    /// The App Group container folder.
    public let container: String
    /// The suite name (the plist's name without `.plist`).
    public let name: String

    /// `<container>/Library/Preferences`.
    public var folder: String { container + "/Library/Preferences" }
    /// The suite's property list.
    public var path: String { folder + "/" + name + ".plist" }
    /// The lock file every read-modify-write holds.
    var lockPath: String { folder + "/." + name + ".richpush-lock" }
    /// The lock file a flush holds from start to end, so two flushes never share an outbox.
    var flushLockPath: String { folder + "/." + name + ".richpush-flush-lock" }
    /// Where a flush keeps the items it claimed until the endpoint acknowledged them.
    public var outboxPath: String { folder + "/." + name + ".richpush-outbox.json" }

    /// Names the suite in `container`: `suite`, or the only `*.plist` under `Library/Preferences`.
    ///
    /// With `creating`, a missing `Library/Preferences` folder is created inside an existing container.
    public init(container: String, suite: String?, creating: Bool = false) throws(AnalyticsError) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: container, isDirectory: &isFolder), isFolder.boolValue else {
            throw AnalyticsError(
                .suiteNotFound,
                "'\(container)' is not a folder: give --app-group the App Group container (it holds Library/Preferences)"
            )
        }
        self.container = container
        let preferences = container + "/Library/Preferences"
        if let suite {
            let bare = suite.hasSuffix(".plist") ? String(suite.dropLast(6)) : suite
            guard !bare.isEmpty, !bare.contains("/"), !bare.hasPrefix("."), !bare.contains("\0") else {
                throw AnalyticsError(
                    .invalidInput,
                    "'\(suite)' is not a suite name: give the name of the plist, such as group.com.example.app.shared")
            }
            name = bare
            if creating && !FileManager.default.fileExists(atPath: preferences) {
                do {
                    try FileManager.default.createDirectory(atPath: preferences, withIntermediateDirectories: true)
                } catch {
                    throw AnalyticsError(.storage, "cannot create '\(preferences)': \(error.localizedDescription)")
                }
            }
            return
        }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: preferences)) ?? [])
            .filter { $0.hasSuffix(".plist") && !$0.hasPrefix(".") }.sorted()
        switch names.count {
        case 1: name = String(names[0].dropLast(6))
        case 0:
            throw AnalyticsError(
                .suiteNotFound,
                "no suite in '\(preferences)': give --suite NAME (the App Group's UserDefaults suite name)")
        default:
            throw AnalyticsError(
                .suiteNotFound,
                "'\(preferences)' holds \(names.count) suites (\(names.joined(separator: ", "))): choose one with --suite NAME"
            )
        }
    }

    /// The suite as it is now (an empty suite when the file does not exist yet), read without the lock.
    public func read() throws(AnalyticsError) -> SuiteSnapshot {
        SuiteSnapshot(root: try readRoot().root)
    }

    /// Reads, changes and replaces the suite while holding its lock; returns what `body` returns.
    ///
    /// The file keeps the format it had (binary for a new suite). Nothing is written when `body` throws
    /// or leaves the suite as it was.
    public func update<Result>(_ body: (inout [String: Any]) throws(AnalyticsError) -> Result) throws(AnalyticsError)
        -> Result
    {
        let lock = try FileLock(path: lockPath)
        defer { lock.release() }
        var (root, format) = try readRoot()
        let original = root as NSDictionary
        let result = try body(&root)
        // Unchanged: nothing to write (and no suite file created where there was none).
        if !original.isEqual(to: root) { try write(root, format: format) }
        return result
    }

    /// Holds the suite's lock while `body` runs, without reading or writing the suite.
    func withLock<Result>(_ body: () throws(AnalyticsError) -> Result) throws(AnalyticsError) -> Result {
        let lock = try FileLock(path: lockPath)
        defer { lock.release() }
        return try body()
    }

    /// The decoded top-level dictionary and the format it was stored in.
    func readRoot() throws(AnalyticsError) -> (
        root: [String: Any], format: PropertyListSerialization.PropertyListFormat
    ) {
        let descriptor: Int32
        do {
            descriptor = try SystemCall.openRegularFile(path)
        } catch {
            if error.code == ENOENT { return ([:], .binary) }
            throw AnalyticsError(.storage, error.message)
        }
        defer { close(descriptor) }
        let bytes: [UInt8]
        do {
            bytes = try SystemCall.readAll(descriptor, upTo: Self.maximumBytes + 1, path: path)
        } catch {
            throw AnalyticsError(.storage, error.message)
        }
        guard bytes.count <= Self.maximumBytes else {
            throw AnalyticsError(.suiteUnreadable, "'\(path)' is larger than \(Self.maximumBytes) bytes; not a suite")
        }
        if bytes.isEmpty { return ([:], .binary) }
        var format = PropertyListSerialization.PropertyListFormat.binary
        let value: Any
        do {
            value = try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: &format)
        } catch {
            throw AnalyticsError(
                .suiteUnreadable,
                "'\(path)' is not a property list (neither binary nor XML); a suite is the plist UserDefaults writes")
        }
        guard let root = value as? [String: Any] else {
            throw AnalyticsError(.suiteUnreadable, "'\(path)' holds \(type(of: value)), not a dictionary")
        }
        return (root, format == .openStep ? .xml : format)
    }

    /// Replaces the plist atomically: an exclusive temporary in its folder, flushed, renamed over it.
    private func write(_ root: [String: Any], format: PropertyListSerialization.PropertyListFormat)
        throws(AnalyticsError)
    {
        let data: Data
        do {
            data = try PropertyListSerialization.data(fromPropertyList: root, format: format, options: 0)
        } catch {
            throw AnalyticsError(.storage, "cannot encode the suite '\(name)' as a property list: \(error)")
        }
        do throws(SystemError) {
            let temporary = try TemporaryFile.createExclusively(in: folder, prefix: ".richpush-")
            defer { temporary.discard() }
            try SystemCall.writeAll(temporary.descriptor, [UInt8](data), path: temporary.path)
            try temporary.commit(as: path, durable: true)
        } catch {
            throw AnalyticsError(.storage, error.message)
        }
    }

    /// The largest suite read (an App Group suite is kilobytes; this bounds a hostile file).
    static let maximumBytes = 64 << 20
}

/// An exclusive `flock` on a lock file, created if missing (never through a link); held until
/// ``release()`` or until the value goes away.
final class FileLock {
    private var descriptor: Int32

    /// Waits for the lock (or, with `wait: false`, fails with ``AnalyticsError/Code/busy`` at once).
    init(path: String, wait: Bool = true) throws(AnalyticsError) {
        let descriptor: Int32
        do {
            descriptor = try SystemCall.retrying("open the lock file", path: path) {
                open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            }
        } catch {
            throw AnalyticsError(.storage, error.message)
        }
        do {
            try SystemCall.retrying("lock", path: path) { flock(descriptor, LOCK_EX | (wait ? 0 : LOCK_NB)) }
        } catch {
            close(descriptor)
            if error.code == EWOULDBLOCK {
                throw AnalyticsError(
                    .busy, "another flush of this suite is running (it holds '\(path)'); wait for it to end")
            }
            throw AnalyticsError(.storage, error.message)
        }
        self.descriptor = descriptor
    }

    /// Releases the lock. Idempotent.
    func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
