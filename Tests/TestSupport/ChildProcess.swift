import Foundation

/// A child process the tests start with posix_spawn.
///
/// Every test starts its children through this, never through Foundation's `Process`: on this
/// toolchain `Process.run()` finds the highest open descriptor with a copy that reads past its
/// getdents buffer (`findMaximumOpenFromProcSelfFD`; `scripts/test --asan` suppresses the report), and
/// the suite has crashed in it with SIGSEGV.
///
/// A child starts as from a terminal: every signal at its default action and nothing blocked,
/// however the test run itself was started (a background job of a non-interactive shell, as CI runs
/// are, inherits SIGINT ignored); descriptors above 2 are closed in it.
///
/// ```swift
/// let result = try ChildProcess.run("/usr/bin/openssl", ["version"])
/// // result.status == 0, result.stdout == "OpenSSL 3.0...\n"
/// ```
package struct ChildProcess: Sendable {
    package let pid: pid_t

    /// What a child left behind: its status as a shell reports it (128 + N after signal N), and its output.
    package struct Result: Sendable {
        package var status: Int32
        /// Whether a signal's default action ended it (its status is then 128 + the signal).
        package var killed: Bool
        package var stdout: String
        package var stderr: String
    }

    /// Where a standard descriptor of the child comes from or goes to.
    package enum Stream: Sendable {
        case null
        /// A file, opened for reading (stdin) or created and truncated (stdout, stderr).
        case file(String)
        /// A file opened to append to, created if missing.
        case appending(String)
        /// A descriptor of this process, duplicated into the child.
        case descriptor(Int32)
        /// stderr only: the same as stdout.
        case stdout
    }

    /// Starts `executable` (a path) with `arguments`, in `directory`, with `environment` (nil: this
    /// process's own).
    package static func start(
        _ executable: String, _ arguments: [String], directory: String? = nil, environment: [String: String]? = nil,
        stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null
    ) throws -> ChildProcess {
        // Relative paths (the executable, the files) are this process's, as Foundation's Process has
        // them: the executable is made absolute, and the directory is changed after the files are open.
        let cwd = FileManager.default.currentDirectoryPath
        let executable = executable.hasPrefix("/") ? executable : cwd + "/" + executable
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            let writing = target != 0
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", writing ? O_WRONLY : O_RDONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(
                    &actions, target, path, writing ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY, 0o600)
            case .appending(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            case .descriptor(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            case .stdout:
                posix_spawn_file_actions_adddup2(&actions, 1, target)
            }
        }
        _ = Self.addCloseFrom(&actions, 3)
        if let directory { _ = Self.addChdir(&actions, directory) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Every signal at its default action (SIGPIPE too, which libcurl ignores for a moment).
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0)=\($1)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .ENOENT) }
        return ChildProcess(pid: pid)
    }

    // glibc's posix_spawn_file_actions_addchdir_np and _addclosefrom_np (2.29, 2.34), which Swift's
    // Glibc module does not import: looked up by name.
    private typealias ChdirAction =
        @convention(c) (
            UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>
        ) -> Int32
    private typealias CloseFromAction =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addChdir: ChdirAction = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else {
            fatalError("glibc has no posix_spawn_file_actions_addchdir_np")
        }
        return unsafeBitCast(symbol, to: ChdirAction.self)
    }()
    private static let addCloseFrom: CloseFromAction = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        else { fatalError("glibc has no posix_spawn_file_actions_addclosefrom_np") }
        return unsafeBitCast(symbol, to: CloseFromAction.self)
    }()

    /// Runs `executable` to its end, its output captured through files (a chatty child never blocks
    /// on a full pipe), waiting on a Dispatch thread.
    package static func run(
        _ executable: String, _ arguments: [String], directory: String? = nil, environment: [String: String]? = nil,
        stdin: Stream = .null
    ) async throws -> Result {
        let (child, scratch) = try startCapturing(executable, arguments, directory, environment, stdin)
        let (status, killed) = await child.wait()
        return collect(status, killed, scratch)
    }

    /// ``run(_:_:directory:environment:stdin:)`` blocking the calling thread: for short children
    /// (openssl, python) only, as it holds a cooperative-pool thread while they run.
    package static func runBlocking(
        _ executable: String, _ arguments: [String], directory: String? = nil, environment: [String: String]? = nil,
        stdin: Stream = .null
    ) throws -> Result {
        let (child, scratch) = try startCapturing(executable, arguments, directory, environment, stdin)
        let (status, killed) = child.waitBlocking()
        return collect(status, killed, scratch)
    }

    private static func startCapturing(
        _ executable: String, _ arguments: [String], _ directory: String?, _ environment: [String: String]?,
        _ stdin: Stream
    ) throws -> (ChildProcess, String) {
        let scratch = try Fixtures.temporaryFolder("richpush-child")
        do {
            let child = try start(
                executable, arguments, directory: directory, environment: environment, stdin: stdin,
                stdout: .file(scratch + "/stdout"), stderr: .file(scratch + "/stderr"))
            return (child, scratch)
        } catch {
            try? FileManager.default.removeItem(atPath: scratch)
            throw error
        }
    }

    private static func collect(_ status: Int32, _ killed: Bool, _ scratch: String) -> Result {
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        return Result(
            status: status, killed: killed,
            stdout: (try? String(contentsOfFile: scratch + "/stdout", encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: scratch + "/stderr", encoding: .utf8)) ?? "")
    }

    /// Sends a signal (for example SIGINT) to the process.
    package func signal(_ number: Int32) {
        kill(pid, number)
    }

    /// Whether the process is still running (not yet exited; an exited one not yet waited for is a
    /// zombie, state Z in /proc).
    package var isRunning: Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }

    /// Whether `signal` is in the mask `field` of /proc/PID/status (`SigIgn`: ignored, `SigCgt`:
    /// caught, `SigBlk`: blocked); nil when the status cannot be read.
    package func signal(_ signal: Int32, isIn field: String) -> Bool? {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
        return line.flatMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
            .map { $0 & (1 << UInt64(signal - 1)) != 0 }
    }

    /// What the process's open descriptors point at (from /proc/PID/fd): a file created with O_TMPFILE
    /// shows as `DIR/#INODE (deleted)`.
    package var openFiles: [String] {
        let folder = "/proc/\(pid)/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0)
        }
    }

    /// Waits for the process to exit on a Dispatch thread (blocking Swift's cooperative pool, one
    /// thread per core, would stall every other test in the process); returns its status as a shell
    /// reports it and whether a signal ended it.
    package func wait() async -> (status: Int32, killed: Bool) {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: waitBlocking()) }
        }
    }

    /// ``wait()`` on the calling thread. A child that cannot be waited for (already waited for)
    /// reports status -1, which no exit gives.
    package func waitBlocking() -> (status: Int32, killed: Bool) {
        var status: Int32 = 0
        var waited = waitpid(pid, &status, 0)
        while waited < 0 && errno == EINTR { waited = waitpid(pid, &status, 0) }
        guard waited == pid else { return (-1, false) }
        let signal = status & 0x7f
        return signal == 0 ? ((status >> 8) & 0xff, false) : (128 + signal, true)
    }
}
