import Foundation

/// What a run of the built `richpush` binary produced.
package struct BinaryRun: Sendable {
    package var status: Int32
    package var stdout: String
    package var stderr: String
}

/// Runs the `richpush` executable built next to the test bundle, as a user would.
package enum RichPushBinary {
    /// The binary every end-to-end test runs: `RICHPUSH_TEST_BINARY` when set (an absolute path;
    /// `scripts/test` sets it to the release build with the static Swift standard library, the binary
    /// users install), otherwise the `richpush` in the same build folder as the running test binary.
    package static let path: String = {
        if let chosen = ProcessInfo.processInfo.environment["RICHPUSH_TEST_BINARY"], !chosen.isEmpty {
            return chosen
        }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("richpush").path
    }()

    /// Runs the binary with `arguments`, feeding `stdin`, in `directory`; waits for it to exit.
    ///
    /// Output goes through files, not pipes, so a chatty child never blocks on a full pipe.
    package static func run(
        _ arguments: [String], stdin: Data = Data(), directory: String? = nil, environment: [String: String] = [:],
        stdoutPath: String? = nil
    ) async throws -> BinaryRun {
        try await start(arguments, stdin: stdin, directory: directory, environment: environment, stdoutPath: stdoutPath)
            .wait()
    }

    /// Runs the binary under GNU time and returns its own peak resident memory in bytes.
    package static func measured(_ arguments: [String]) async throws -> (run: BinaryRun, peakBytes: Int) {
        let marker = "RICHPUSH_PEAK_KB="
        let running = try start(arguments, launcher: ["/usr/bin/time", "-f", marker + "%M"])
        var run = await running.wait()
        let lines = run.stderr.split(separator: "\n")
        let peak = lines.last { $0.hasPrefix(marker) }.flatMap { Int($0.dropFirst(marker.count)) } ?? 0
        run.stderr = lines.filter { !$0.hasPrefix(marker) }.joined(separator: "\n")
        return (run, peak * 1024)
    }

    /// Starts the binary and returns at once; ``RunningBinary/wait()`` collects the result.
    ///
    /// `ignoredSignals` start ignored, through `sh -c 'trap "" ...; exec ...'` (exec keeps SIG_IGN and
    /// the pid); otherwise the child starts as from a terminal (``ChildProcess``).
    package static func start(
        _ arguments: [String], stdin: Data = Data(), directory: String? = nil, environment: [String: String] = [:],
        stdoutPath: String? = nil, launcher: [String] = [], ignoring ignoredSignals: [Int32] = []
    ) throws -> RunningBinary {
        let scratch = try Fixtures.temporaryFolder("richpush-run")
        let inPath = scratch + "/stdin", outPath = stdoutPath ?? scratch + "/stdout", errPath = scratch + "/stderr"
        try stdin.write(to: URL(fileURLWithPath: inPath))
        let ignore =
            ignoredSignals.isEmpty
            ? []
            : ["/bin/sh", "-c", "trap '' \(ignoredSignals.map(String.init).joined(separator: " ")); exec \"$@\"", "sh"]
        let command = ignore + launcher + [path]
        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { $1 }
        do {
            let child = try ChildProcess.start(
                command[0], Array(command.dropFirst()) + arguments, directory: directory, environment: merged,
                stdin: .file(inPath), stdout: stdoutPath == nil ? .file(outPath) : .appending(outPath),
                stderr: .file(errPath))
            return RunningBinary(child: child, scratch: scratch, outPath: outPath, errPath: errPath)
        } catch {
            try? FileManager.default.removeItem(atPath: scratch)
            throw error
        }
    }
}

/// A started `richpush` process.
package struct RunningBinary: Sendable {
    package let child: ChildProcess
    let scratch: String
    let outPath: String
    let errPath: String

    package var pid: pid_t { child.pid }

    /// Sends a signal (for example SIGINT) to the process.
    package func signal(_ number: Int32) { child.signal(number) }

    /// What the process's open descriptors point at (``ChildProcess/openFiles``).
    package var openFiles: [String] { child.openFiles }

    /// Whether the process is still running (``ChildProcess/isRunning``).
    package var isRunning: Bool { child.isRunning }

    /// Whether `signal` is in a mask of its /proc status (``ChildProcess/signal(_:isIn:)``).
    package func signal(_ signal: Int32, isIn field: String) -> Bool? { child.signal(signal, isIn: field) }

    /// Waits for the process to exit (on a Dispatch thread) and returns what it produced.
    package func wait() async -> BinaryRun {
        let (status, _) = await child.wait()
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        return BinaryRun(
            status: status,
            stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }
}
