import Foundation

/// What a run of the built `richpush` binary produced.
public struct BinaryRun: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Runs the `richpush` executable built next to the test bundle, as a user would.
public enum RichPushBinary {
    /// The executable's path: in the same build folder as the running test binary.
    public static var path: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("richpush").path
    }

    /// Runs the binary with `arguments`, feeding `stdin`, in `directory`; waits for it to exit.
    ///
    /// Output goes through files, not pipes, so a chatty child never blocks on a full pipe.
    public static func run(
        _ arguments: [String], stdin: Data = Data(), directory: String? = nil, environment: [String: String] = [:],
        stdoutPath: String? = nil
    ) async throws -> BinaryRun {
        try await start(arguments, stdin: stdin, directory: directory, environment: environment, stdoutPath: stdoutPath)
            .wait()
    }

    /// Runs the binary under GNU time and returns its own peak resident memory in bytes.
    public static func measured(_ arguments: [String]) async throws -> (run: BinaryRun, peakBytes: Int) {
        let marker = "RICHPUSH_PEAK_KB="
        let running = try start(arguments, launcher: ["/usr/bin/time", "-f", marker + "%M"])
        var run = await running.wait()
        let lines = run.stderr.split(separator: "\n")
        let peak = lines.last { $0.hasPrefix(marker) }.flatMap { Int($0.dropFirst(marker.count)) } ?? 0
        run.stderr = lines.filter { !$0.hasPrefix(marker) }.joined(separator: "\n")
        return (run, peak * 1024)
    }

    /// Starts the binary and returns at once; ``RunningBinary/wait()`` collects the result.
    public static func start(
        _ arguments: [String], stdin: Data = Data(), directory: String? = nil, environment: [String: String] = [:],
        stdoutPath: String? = nil, launcher: [String] = [], ignoring ignoredSignals: [Int32] = []
    ) throws -> RunningBinary {
        let scratch = try Fixtures.temporaryFolder("richpush-run")
        let inPath = scratch + "/stdin", outPath = stdoutPath ?? scratch + "/stdout", errPath = scratch + "/stderr"
        try stdin.write(to: URL(fileURLWithPath: inPath))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(
            &actions, 1, outPath, O_WRONLY | O_CREAT | (stdoutPath == nil ? O_TRUNC : 0), 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // A working directory goes through `sh -c 'cd DIR && exec ...'`: exec keeps the pid, so wait4's
        // rusage is still the binary's own.
        // Signals to start ignored go through `sh -c 'trap "" ...; exec ...'` the same way: exec keeps SIG_IGN.
        let ignore =
            ignoredSignals.isEmpty
            ? []
            : ["/bin/sh", "-c", "trap '' \(ignoredSignals.map(String.init).joined(separator: " ")); exec \"$@\"", "sh"]
        let command =
            directory.map { ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", $0] + ignore + launcher + [path] }
            ?? ignore + launcher + [path]
        let argv = (command + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { $1 }
        let envp = merged.map { strdup("\($0)=\($1)") } + [nil]
        defer { envp.forEach { free($0) } }
        // The child starts as from a terminal: SIGINT and SIGTERM at their default action and nothing
        // blocked, however this test run was started (a background job of a non-interactive shell,
        // as CI runs are, inherits SIGINT ignored).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command[0], &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            try? FileManager.default.removeItem(atPath: scratch)
            throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .ENOENT)
        }
        return RunningBinary(pid: pid, scratch: scratch, outPath: outPath, errPath: errPath)
    }
}

/// A started `richpush` process.
public struct RunningBinary: Sendable {
    public let pid: pid_t
    let scratch: String
    let outPath: String
    let errPath: String

    /// Sends a signal (for example SIGINT) to the process.
    public func signal(_ number: Int32) {
        kill(pid, number)
    }

    /// What the process's open descriptors point at (from /proc/PID/fd): a file created with O_TMPFILE
    /// shows as `DIR/#INODE (deleted)`.
    public var openFiles: [String] {
        let folder = "/proc/\(pid)/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0)
        }
    }

    /// Whether the process is still running (not yet exited; an exited one not yet waited for is a
    /// zombie, state Z in /proc).
    public var isRunning: Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }

    /// Waits for the process to exit and returns what it produced.
    ///
    /// The blocking wait4 runs on a Dispatch thread: blocking Swift's cooperative pool would stall
    /// every other test in the process (there is one pool thread per core).
    public func wait() async -> BinaryRun {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: waitBlocking()) }
        }
    }

    private func waitBlocking() -> BinaryRun {
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return BinaryRun(
            status: exitStatus,
            stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }
}
