import Digest
import Foundation
import POSIXKit
import RichPush

/// Checks a batch makes before its long run: that its input holds payloads, and that a resume uses
/// the options the earlier results were made with.
///
/// ```swift
/// let items = try BatchPreflight.items(at: "campaign.ndjson", recursive: false)
/// let changes = try BatchPreflight.changedOptions(in: "out", now: options)   // [] when it may resume
/// ```
package enum BatchPreflight {
    /// The largest file read whole to see whether it is one JSON payload (far above APNs' limit).
    static let onePayloadLimit = 1 << 20

    /// The payloads at `path`: a folder's `*.json` files, the lines of an NDJSON file, or a file
    /// that holds one JSON payload (pretty-printed or not).
    ///
    /// A file that is neither (no line of it is a JSON object, and it is not one JSON value) is
    /// refused with a message that says what batch takes.
    package static func items(at path: String, recursive: Bool) throws(BatchInputError) -> [BatchItem] {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw BatchInputError.input(
                "'\(path)' does not exist: give a folder of *.json payloads, an NDJSON file, or a payload file")
        }
        if (info.st_mode & S_IFMT) == S_IFDIR { return try BatchInput.items(at: path, recursive: recursive) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw BatchInputError.input(
                "'\(path)' is not a regular file or a folder: give a folder of *.json payloads or an NDJSON file")
        }
        if let item = try onePayload(at: path) { return [item] }
        let items = try BatchInput.items(at: path, recursive: recursive)
        guard items.contains(where: isObject) else {
            throw BatchInputError.input(
                "'\(path)' holds no payload: it is neither NDJSON (one JSON payload per line) nor one JSON "
                    + "payload. Give a folder of *.json payloads, an NDJSON file, or a payload file")
        }
        return items
    }

    /// The file as one item when its whole text is one JSON value that does not fit on one line's
    /// reading (a pretty-printed payload), or a one-line file.
    private static func onePayload(at path: String) throws(BatchInputError) -> BatchItem? {
        let bytes: [UInt8]
        do throws(SystemError) {
            let descriptor = try SystemCall.openRegularFile(path)
            defer { close(descriptor) }
            bytes = try SystemCall.readAll(descriptor, upTo: onePayloadLimit + 1, path: path)
        } catch {
            throw BatchInputError.input(error)
        }
        guard bytes.count <= onePayloadLimit, case .object = try? JSONValue.parse(bytes) else { return nil }
        let body = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        // One line: NDJSON of one payload, named as NDJSON lines are (the same output on resume).
        guard body.count > 1 else { return nil }
        let folder = (path as NSString).deletingLastPathComponent
        guard let resolved = BatchInput.realPath(Array(path.utf8)),
            let resolvedFolder = BatchInput.realPath(Array((folder.isEmpty ? "." : folder).utf8))
        else {
            throw BatchInputError.input(SystemError.current("read", path: path))
        }
        let name = (path as NSString).lastPathComponent
        return BatchItem(name: name, outputName: name, source: .file(path: resolved, folder: resolvedFolder))
    }

    private static func isObject(_ item: BatchItem) -> Bool {
        guard case .success(let bytes) = item.read(limit: onePayloadLimit) else { return false }
        if case .object = try? JSONValue.parse(bytes) { return true }
        return false
    }

    /// Where a batch keeps the options its results were made with.
    package static func optionsPath(in folder: String) -> String { folder + "/.richpush/options.json" }

    /// The options that differ between the earlier run in `folder` and `now`, as sentences; empty
    /// when there was no earlier run, it recorded no options, or they are the same.
    package static func changedOptions(in folder: String, now: [String: String]) -> [String] {
        let journal = folder + "/.richpush/journal.ndjson"
        var info = stat()
        guard stat(journal, &info) == 0, info.st_size > 0,
            let data = FileManager.default.contents(atPath: optionsPath(in: folder)),
            let recorded = try? JSONDecoder().decode([String: String].self, from: data)
        else { return [] }
        // Files written before settings had names of their own keyed them with leading dashes: those are dropped.
        let earlier = Dictionary(
            recorded.map { (String($0.key.drop(while: { $0 == "-" })), $0.value) }, uniquingKeysWith: { $1 })
        return Set(earlier.keys).union(now.keys).sorted().compactMap { name in
            let before = earlier[name] ?? "(not set)"
            let after = now[name] ?? "(not set)"
            let shown = Setting(rawValue: name).map(\.description) ?? name
            return before == after ? nil : "\(shown) was \(before), now \(after)"
        }
    }

    /// Records the options of this run in `folder`, atomically.
    package static func record(_ options: [String: String], in store: AttachmentStore) throws(StoreError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(options) else { return }
        _ = try store.writeAtomically(Array(data) + [UInt8(ascii: "\n")], to: ".richpush/options.json")
    }

    /// The settings of `policy` that change a payload's verdict, by ``Setting`` name.
    package static func options(of policy: ExtensionPolicy, sharedDownloads: Bool) -> [String: String] {
        let fetch = policy.fetch
        func seconds(_ duration: Duration?) -> String {
            duration.map { String(format: "%g s", $0.inSeconds) } ?? "off"
        }
        var options = [
            "budget": seconds(policy.budget),
            "push-type": policy.pushType.rawValue,
            "binary-mb": policy.binaryMegabytes ? "on" : "off",
            "allow-http": fetch.allowHTTP ? "on" : "off",
            "connect-timeout": seconds(fetch.connectTimeout),
            "stall-window": seconds(fetch.stallWindow),
            "max-bytes": fetch.maxBytes.map(String.init) ?? "no cap",
            "max-redirs": String(fetch.maxRedirects),
            "cacert": fetch.caFile.map { caDescription($0) } ?? "none",
            "connect-to": fetch.hostMappings.isEmpty
                ? "none" : fetch.hostMappings.map(\.description).joined(separator: ","),
            "reuse": fetch.connections == .shared ? "on" : "off",
            "share-downloads": sharedDownloads ? "on" : "off",
        ]
        // Only when not the default, so that a run recorded before these settings existed resumes.
        if policy.device != .standard {
            options["ios"] = policy.device.ios.description
            options["linked-sdk"] = policy.device.linkedSDK.description
        }
        return options
    }

    /// The digest of the options that decide verdicts, for a run's ``RunIdentity``: those of
    /// ``options(of:sharedDownloads:)`` without what differs between the machines of one campaign
    /// (the CA file's path, by content only; the host mappings, whose ports are local).
    package static func verdictDigest(of policy: ExtensionPolicy, extra: [String: String] = [:]) -> String {
        var chosen = Self.options(of: policy, sharedDownloads: false)
        chosen["cacert"] = policy.fetch.caFile.map { caContent($0) } ?? "none"
        chosen["connect-to"] = nil
        chosen["share-downloads"] = nil
        return RunIdentity.digest(of: chosen.merging(extra, uniquingKeysWith: { _, new in new }))
    }

    /// A CA file's content digest (or "unreadable").
    private static func caContent(_ path: String) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { return "unreadable" }
        var digest = SHA256Digest()
        data.withUnsafeBytes { digest.update($0) }
        return digest.hex() ?? "?"
    }

    /// A CA file by path and content, so a changed certificate at the same path counts as a change.
    private static func caDescription(_ path: String) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { return path }
        var digest = SHA256Digest()
        data.withUnsafeBytes { digest.update($0) }
        return "\(path) (sha256 \(digest.hex().map { String($0.prefix(12)) } ?? "?"))"
    }
}
