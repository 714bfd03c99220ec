import Foundation
import POSIXKit
import RichPush

/// One `UserDefaults` suite of an App Group container, as the device keeps it: the property list
/// `<container>/Library/Preferences/<suite>.plist` (binary on a device or simulator).
///
/// Every change is a read-modify-write under an exclusive `flock` on a lock file beside the plist
/// (``update(_:)``), and the new plist replaces the old one by a rename from an exclusive temporary
/// in the same folder, so an extension and an app that write at once lose nothing and a reader never
/// sees half a file. ``PropertyListReader`` reads the file (bounded in size and objects, see
/// ``PropertyListLimits/suite``); ``PropertyListWriter`` writes it. A temporary
/// left by a writer that was killed before its rename is removed by the next write.
///
/// ```swift
/// let suite = try AppGroupSuite(container: "Samples/app-group", suite: nil)
/// try suite.update { root in root["pending_custom_events"] = [["event_name": "opened"]] }
/// ```
package struct AppGroupSuite: Sendable {
    /// The App Group container folder.
    package let container: String
    /// The suite name (the plist's name without `.plist`).
    package let name: String

    /// `<container>/Library/Preferences`.
    package var folder: String { container + "/Library/Preferences" }
    /// The suite's property list.
    package var path: String { folder + "/" + name + ".plist" }
    /// The lock file every read-modify-write holds.
    var lockPath: String { folder + "/." + name + ".richpush-lock" }
    /// The lock file a flush holds from start to end, so two flushes never share an outbox.
    var flushLockPath: String { folder + "/." + name + ".richpush-flush-lock" }
    /// Where a flush keeps the items it claimed until the endpoint acknowledged them.
    package var outboxPath: String { folder + "/." + name + ".richpush-outbox.json" }

    /// Names the suite in `container`: `suite`, or the only `*.plist` under `Library/Preferences`.
    ///
    /// With `creating`, a missing `Library/Preferences` folder is created inside an existing container.
    package init(container: String, suite: String?, creating: Bool = false) throws(AnalyticsError) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: container, isDirectory: &isFolder), isFolder.boolValue else {
            throw AnalyticsError(
                .suiteNotFound,
                "'\(container)' is not a folder: give \(Setting.appGroup) the App Group container (it holds Library/Preferences)"
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
                "no suite in '\(preferences)': give \(Setting.suite) NAME (the App Group's UserDefaults suite name)")
        default:
            throw AnalyticsError(
                .suiteNotFound,
                "'\(preferences)' holds \(names.count) suites (\(names.joined(separator: ", "))): choose one with \(Setting.suite) NAME"
            )
        }
    }

    /// The suite as it is now (an empty suite when the file does not exist yet), read without the lock.
    package func read() throws(AnalyticsError) -> SuiteSnapshot {
        SuiteSnapshot(root: try readRoot().root)
    }

    /// Reads, changes and replaces the suite while holding its lock; returns what `body` returns.
    ///
    /// The file keeps the format it had (binary for a new suite). Nothing is written when `body` throws
    /// or leaves the suite as it was.
    package func update<Result>(_ body: (inout [String: Any]) throws(AnalyticsError) -> Result) throws(AnalyticsError)
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
    ///
    /// Read through the bounded ``PropertyListReader`` (``PropertyListLimits/suite``): a missing or
    /// empty file is an empty suite; a file that cannot be read is a storage failure; anything else
    /// wrong with it (not a regular file, too large, damaged, a reference bomb) makes it unusable.
    func readRoot() throws(AnalyticsError) -> (
        root: [String: Any], format: PropertyListSerialization.PropertyListFormat
    ) {
        let reader = PropertyListReader(limits: .suite)
        do {
            let bytes = try reader.bytes(of: path)
            if bytes.isEmpty { return ([:], .binary) }
            let document = try reader.decode(bytes, path: path)
            return (try document.dictionary(), document.format)
        } catch {
            switch error.code.kind {
            case .missing: return ([:], .binary)
            case .unreadable: throw AnalyticsError(.storage, error.cause?.message ?? error.message)
            case .notARegularFile, .tooLarge, .malformed, .referenceCycle, .tooManyObjects, .tooManyExpandedBytes,
                .unsupported, .notAPropertyList:
                throw AnalyticsError(
                    .suiteUnreadable, error.message + "; a suite is the binary or XML plist UserDefaults writes")
            }
        }
    }

    /// Replaces the plist atomically: an exclusive temporary in its folder, flushed, renamed over it.
    private func write(_ root: [String: Any], format: PropertyListSerialization.PropertyListFormat)
        throws(AnalyticsError)
    {
        let data: Data
        do {
            data = try PropertyListWriter.data(root, format: format)
        } catch {
            throw AnalyticsError(.storage, "cannot encode the suite '\(name)' as a property list: \(error)")
        }
        removeStaleTemporaries()
        do throws(SystemError) {
            let temporary = try TemporaryFile.create(in: folder, prefix: Self.temporaryPrefix)
            defer { temporary.discard() }
            try SystemCall.writeAll(temporary.descriptor, [UInt8](data), path: path)
            try temporary.commit(as: path, durable: true)
        } catch {
            throw AnalyticsError(.storage, error.message)
        }
    }

    /// How the suite's named temporaries start (each is `<prefix><random>.part` in ``folder``; where
    /// the file system allows `O_TMPFILE` they have no name at all).
    static let temporaryPrefix = ".richpush-"

    /// Removes the temporaries a writer killed before its rename left behind.
    ///
    /// Called with the suite's lock held (from ``update(_:)``), so no other richpush writer of this
    /// suite is between creating and renaming its temporary; a writer of another suite in the same
    /// folder may be, so only a temporary untouched for ``staleAfter`` (far longer than any write
    /// takes) is removed. Only regular files of the exact pattern `.richpush-<hex>.part` are touched.
    func removeStaleTemporaries(now: Date = Date()) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where Self.isTemporaryName(name) {
            let candidate = folder + "/" + name
            var info = stat()
            guard lstat(candidate, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            let modified = Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec))
            guard now.timeIntervalSince(modified) > Self.staleAfter else { continue }
            unlink(candidate)
        }
    }

    /// Whether `name` is one of the suite writer's temporaries: `.richpush-`, 1 to 32 hex digits, `.part`.
    static func isTemporaryName(_ name: String) -> Bool {
        guard name.hasPrefix(temporaryPrefix), name.hasSuffix(".part") else { return false }
        let middle = name.dropFirst(temporaryPrefix.count).dropLast(5)
        return (1...32).contains(middle.count) && middle.allSatisfy(\.isHexDigit) && middle.allSatisfy(\.isASCII)
    }

    /// How old a temporary must be before it counts as left behind (a suite write takes milliseconds).
    static let staleAfter: TimeInterval = 60
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
