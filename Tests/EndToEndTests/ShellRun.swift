import Foundation
import TestSupport

/// What a bash script around the built binary produced: the exit status (128 + N when a signal ended it).
struct ShellRun: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs bash scripts that call the built `richpush` (as `"$RP"`), under a hard time limit that only ends a
/// hang (a read that blocks for ever): far above what a loaded machine takes, which has needed over 12 s
/// to start the binary once, and a script may start it several times.
///
/// Shell redirections are the point: `2>&-`, `2>/dev/full`, pipes into `head`, `ulimit`.
enum Shell {
    /// Runs `script` in `directory` with `environment` added (RP is the binary); kills it after `limit` seconds.
    static func run(
        _ script: String, in directory: String, environment: [String: String] = [:], limit: Int = 120
    ) async throws -> ShellRun {
        var merged = ProcessInfo.processInfo.environment
        merged["RP"] = RichPushBinary.path
        merged.merge(environment) { $1 }
        let result = try await ChildProcess.run(
            "/usr/bin/timeout", ["-s", "KILL", String(limit), "/bin/bash", "-c", script], directory: directory,
            environment: merged)
        return ShellRun(status: result.status, stdout: result.stdout, stderr: result.stderr)
    }
}

/// Every entry below a folder (not following links): kind and content, to tell what a run changed.
enum FolderSnapshot {
    static func take(_ folder: String) -> [String: String] {
        var entries: [String: String] = [:]
        let walker = FileManager.default.enumerator(atPath: folder)
        while let name = walker?.nextObject() as? String {
            let path = folder + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                let data = FileManager.default.contents(atPath: path) ?? Data()
                entries[name] = "file " + data.base64EncodedString()
            case S_IFLNK:
                entries[name] = "link " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?")
            case S_IFDIR: entries[name] = "folder"
            default: entries[name] = "other"
            }
        }
        return entries
    }
}
