import AssetServer
import Foundation
import TestSupport
import Testing

/// SIGINT and SIGTERM at any moment of a run: exit 130, never a file left behind.
@Suite struct SignalTests {
    /// How a run ended.
    struct Ending {
        var status: Int32
        /// Ended by the signal's default action rather than by the command itself.
        var killed: Bool
    }

    /// Starts the binary, sends `signals` after `delays` milliseconds each, and waits (60 s at most: the
    /// exit status, not the time, tells a handled signal from a run that went on).
    static func run(
        _ arguments: [String], in directory: String, signals: [(delay: Int, number: Int32)], stdin: FileHandle? = nil,
        afterStart: Bool = false
    ) async throws -> Ending {
        let process = try ChildProcess.start(
            RichPushBinary.path, arguments, directory: directory,
            stdin: stdin.map { .descriptor($0.fileDescriptor) } ?? .null)
        // Sleeping and polling happen on a Dispatch thread: blocking Swift's cooperative pool would
        // stall every other test in the process.
        let ended = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            DispatchQueue.global().async {
                if afterStart { waitForStart(process) }
                for signal in signals {
                    if signal.delay > 0 { usleep(useconds_t(signal.delay * 1000)) }
                    process.signal(signal.number)
                }
                let deadline = Date().addingTimeInterval(60)
                while process.isRunning && Date() < deadline { usleep(10_000) }
                continuation.resume(returning: !process.isRunning)
            }
        }
        if !ended {
            process.signal(SIGKILL)
            _ = await process.wait()
            return Ending(status: -1, killed: true)
        }
        let (status, killed) = await process.wait()
        return Ending(status: status, killed: killed)
    }

    /// Waits (60 s at most: a busy machine has taken over 12 s to start the binary) until the process
    /// `pid` is richpush's own: past exec, with SIGINT caught (the C constructor catches it before the
    /// Swift runtime starts), so the dynamic loader's time, which a busy machine stretches, is not part
    /// of the delays.
    static func waitForStart(_ process: ChildProcess) {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            // Past exec (the spawning child blocks every signal too, before it becomes richpush).
            let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(process.pid)/exe")) ?? ""
            if exe.hasSuffix("/richpush") && process.signal(SIGINT, isIn: "SigCgt") == true { return }
            usleep(200)
        }
    }

    static func slowPayload(_ folder: String) throws -> String {
        let path = folder + "/p.json"
        try Data(
            #"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg?delay=20000","type":"jpg"}}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func sigintAtEarlyMomentsExits130AndLeavesNothing() async throws {
        let server = try Fixtures.startServer()
        let folder = try Fixtures.temporaryFolder("richpush-signal")
        defer {
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }
        let payload = try Self.slowPayload(folder)
        var handled = 0
        for delay in [0, 5, 10, 20, 40, 80] {
            for attempt in 0..<3 {
                let out = folder + "/out-\(delay)-\(attempt)"
                let ending = try await Self.run(
                    [
                        "process", "--out", out, "--budget", "30", "--cacert", Fixtures.caFile, "--connect-to",
                        "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)", payload,
                    ], in: folder, signals: [(delay, SIGINT)], afterStart: true)
                #expect(ending.status == 130, "SIGINT after \(delay) ms")
                #expect(!ending.killed, "SIGINT \(delay) ms after the start was not handled")
                if !ending.killed { handled += 1 }
                #expect(Fixtures.files(in: out).isEmpty, "nothing left in --out after \(delay) ms")
            }
        }
        // Counted from the process's own start (the C constructor, which catches an early signal; the
        // loader's time before it, which a busy machine stretches, is waited out): every one handled.
        #expect(handled == 18, "from its start on the command itself handles every signal")
    }

    @Test func sigtermAndASecondSigintAlsoExit130() async throws {
        let server = try Fixtures.startServer()
        let folder = try Fixtures.temporaryFolder("richpush-signal")
        defer {
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }
        let payload = try Self.slowPayload(folder)
        let options = [
            "--budget", "30", "--cacert", Fixtures.caFile, "--connect-to",
            "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)", payload,
        ]
        // Counted from richpush's own start: before it, the signal's default action would end the process.
        let term = try await Self.run(
            ["process", "--out", folder + "/a"] + options, in: folder, signals: [(150, SIGTERM)], afterStart: true)
        #expect(term.status == 130 && !term.killed)
        let twice = try await Self.run(
            ["process", "--out", folder + "/b"] + options, in: folder, signals: [(150, SIGINT), (1, SIGINT)],
            afterStart: true)
        #expect(twice.status == 130 && !twice.killed)
        #expect(Fixtures.files(in: folder + "/a").isEmpty && Fixtures.files(in: folder + "/b").isEmpty)
    }

    @Test func sigintEndsAProcessWaitingOnStdin() async throws {
        let folder = try Fixtures.temporaryFolder("richpush-signal")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A writer that never finishes: the read must not make Ctrl-C ineffective.
        let pipe = Pipe()
        let ending = try await Self.run(
            ["process", "--out", folder + "/out", "-"], in: folder, signals: [(300, SIGINT)],
            stdin: pipe.fileHandleForReading, afterStart: true)
        try? pipe.fileHandleForWriting.close()
        #expect(ending.status == 130 && !ending.killed)
    }

    /// SIGKILL (no handler runs) while attachments are being written: their temporaries are unnamed
    /// (O_TMPFILE), so the output folder holds no `.part` file afterwards, with nothing to clean up.
    @Test(arguments: ["process", "batch"])
    func aKillMidDownloadLeavesNoTemporaryFile(command: String) async throws {
        let server = try Fixtures.startServer()
        let folder = try Fixtures.temporaryFolder("richpush-signal")
        defer {
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }
        // 2,000 bytes arrive and are written, then the body stalls for 20 s.
        let payloads = folder + "/payloads"
        try FileManager.default.createDirectory(atPath: payloads, withIntermediateDirectories: true)
        for index in 0..<3 {
            try Data(
                (#"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg"#
                    + #"?stall=2000&stall-ms=20000&n=\#(index)","type":"jpg"}}}"#).utf8
            ).write(to: URL(fileURLWithPath: payloads + "/\(index).json"))
        }
        let out = folder + "/out"
        let process = try ChildProcess.start(
            RichPushBinary.path,
            [
                command, "--out", out, "--budget", "30", "--cacert", Fixtures.caFile, "--connect-to",
                "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)",
            ] + [command == "batch" ? payloads : payloads + "/0.json"])
        let wanted = command == "batch" ? 3 : 1
        // Polled on a Dispatch thread: blocking the cooperative pool would stall the other tests.
        let (started, killed) = await withCheckedContinuation {
            (continuation: CheckedContinuation<(Bool, Bool), Never>) in
            DispatchQueue.global().async {
                // Until every download started (the body then stalls for 20 s): generous, as a busy
                // machine has taken over 12 s to start the binary.
                let deadline = Date().addingTimeInterval(60)
                while server.requestCount < wanted && process.isRunning && Date() < deadline { usleep(5_000) }
                // The first bytes reach the file right after the request.
                usleep(200_000)
                let started = server.requestCount >= wanted && process.isRunning
                process.signal(SIGKILL)
                continuation.resume(returning: (started, process.waitBlocking().killed))
            }
        }
        #expect(started, "every download had started when the process was killed")
        #expect(killed)
        let left = Fixtures.files(in: out).filter { $0.hasSuffix(".part") || $0.contains(".richpush-") }
        #expect(left.isEmpty, "a killed \(command) left \(left)")
    }
}
