import AssetServer
import Foundation
import TestSupport
import Testing

/// Running out of file descriptors is the client's fault: bench and batch check their limit before a
/// run, counting what each download holds (the relay's two under a network profile) and what the
/// parent left open, and refuse with exit 69, the numbers and a fix the tool accepts. (`process` at a
/// tiny limit is a hostile-input case.)
@Suite struct DescriptorLimitTests {
    static let prlimit = "/usr/bin/prlimit"

    func run(_ arguments: [String], limit: Int) async throws -> BinaryRun {
        try await RichPushBinary.start(
            arguments, directory: Fixtures.root, launcher: [Self.prlimit, "--nofile=\(limit):\(limit)"]
        ).wait()
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: prlimit)))
    func benchRefusesAConcurrencyTheDescriptorLimitCannotHold() async throws {
        let run = try await run(
            ["bench", "--serve", Fixtures.assets, "--devices", "300", "--concurrency", "300", "--no-progress"],
            limit: 200)
        #expect(run.status == 69, "\(run.stderr)")
        #expect(run.stderr.contains("ulimit -n"), "\(run.stderr)")
        #expect(run.stderr.contains("--concurrency"), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    /// The relay's descriptors count: 100 devices fit in 200 files on loopback, not through a profile.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: prlimit)))
    func aNetworkProfileCountsTheRelaysDescriptors() async throws {
        let arguments = [
            "bench", "--serve", Fixtures.assets, "--devices", "100", "--concurrency", "100", "--no-progress",
        ]
        let plain = try await run(arguments + ["--time-limit", "20"], limit: 300)
        #expect(plain.status == 0, "\(plain.stderr)")
        let relayed = try await run(arguments + ["--network", "lte"], limit: 300)
        #expect(relayed.status == 69, "\(relayed.stderr)")
        #expect(
            relayed.stderr.contains("3 per download: a socket, 2 for the network profile's relay"), "\(relayed.stderr)")
    }

    /// Descriptors a parent leaves open count against the limit, and the advice never proposes a
    /// concurrency below 1 (which no command takes).
    @Test func descriptorsTheParentLeftOpenCount() async throws {
        let folder = try Fixtures.temporaryFolder("richpush-descriptors")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let leak = "ulimit -n 150; for fd in $(seq 10 109); do eval \"exec $fd</dev/null\"; done; "
        let bench = try await Shell.run(
            leak + #""$RP" bench --serve "$ASSETS" --devices 20 --concurrency 20 --no-progress"#, in: folder,
            environment: ["ASSETS": Fixtures.assets])
        #expect(bench.status == 69, "\(bench.stderr)")
        #expect(bench.stderr.contains("already open"), "\(bench.stderr)")
        #expect(bench.stderr.contains("close the descriptors the parent process left open"), "\(bench.stderr)")
        #expect(!bench.stderr.contains("lower --concurrency to"), "\(bench.stderr)")
        let batch = try await Shell.run(
            leak + #""$RP" batch "$PAYLOADS" --out out --concurrency 8 --no-progress"#, in: folder,
            environment: ["PAYLOADS": Fixtures.root + "/Samples/payloads"])
        #expect(batch.status == 69, "\(batch.stderr)")
        #expect(batch.stderr.contains("a socket, a temporary file"), "\(batch.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/out"), "nothing written")
    }

    /// `process` at a limit that cannot hold one download beside richpush's reserve is refused before
    /// it makes anything (exit 69, the numbers, the fix); with enough free it attaches. (Where the
    /// boundary falls moves by a descriptor from run to run: the count is read while the runtime's
    /// threads start.)
    @Test func processIsRefusedBeforeItCanRunOutOfDescriptors() async throws {
        let server = try Fixtures.startServer()
        let folder = try Fixtures.temporaryFolder("richpush-descriptors")
        defer {
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }
        try Data(HostileInputTests.hero).write(to: URL(fileURLWithPath: folder + "/p.json"))
        var outcomes: [Bool] = []  // true: attached, false: refused
        for leaked in 0...24 {
            let run = try await Self.process(leaked: leaked, limit: Self.tightLimit, in: folder, server: server)
            let reason = HostileInputTests.reason(of: run)
            if run.status == 0 {
                #expect(reason == "ok", "\(leaked) left open: \(run.stdout) \(run.stderr)")
                outcomes.append(true)
            } else {
                #expect(run.status == 69, "\(leaked) left open: \(run.status) \(run.stderr)")
                #expect(
                    run.stderr.contains("too many open files: one download needs about"), "\(run.stderr)")
                #expect(run.stderr.contains("already open"), "\(run.stderr)")
                #expect(run.stdout.isEmpty, "no verdict for a run that never started")
                outcomes.append(false)
            }
            #expect(
                outcomes.last == true || !FileManager.default.fileExists(atPath: folder + "/out"),
                "a refused run makes nothing")
            try? FileManager.default.removeItem(atPath: folder + "/out")
        }
        #expect(outcomes.first == true, "the limit holds one download when nothing leaked: \(outcomes)")
        #expect(outcomes.last == false, "24 leaked descriptors are too many: \(outcomes)")
    }

    /// A run that held its last descriptor trapped in libdispatch (its worker-pool monitor opens
    /// `/proc/TID/stat` each second while work is queued and stops the process with SIGILL when it
    /// cannot), about once in 100 runs on a loaded machine; runs are now refused before they can get
    /// there. 100 rounds at the two leak counts around the boundary (a guard, not a proof): exits are
    /// 0 or 69, never a trap.
    @Test func theTightestLimitAProcessStartsAtNeverTrapsTheRuntime() async throws {
        let server = try Fixtures.startServer()
        let folder = try Fixtures.temporaryFolder("richpush-descriptor-trap")
        defer {
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }
        try Data(HostileInputTests.hero).write(to: URL(fileURLWithPath: folder + "/p.json"))
        var boundary = 0
        while boundary < 40,
            try await Self.process(leaked: boundary + 1, limit: Self.tightLimit, in: folder, server: server).status == 0
        {
            try? FileManager.default.removeItem(atPath: folder + "/out")
            boundary += 1
        }
        let run = try await Shell.run(
            "ulimit -n \(Self.tightLimit); for round in $(seq 1 100); do for leaked in \(boundary) \(boundary + 1); do ("
                + "for fd in $(seq 3 $((2 + leaked))); do eval \"exec $fd</dev/null\"; done; "
                + HostileInputTests.process + " p.json >/dev/null 2>&1; status=$?; rm -rf out; "
                + "if [ $status -ne 0 ] && [ $status -ne 69 ]; then echo \"round $round, $leaked leaked: $status\"; fi"
                + "); done; done",
            in: folder,
            environment: ["CA": Fixtures.caFile, "MAP": "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)"])
        #expect(run.status == 0)
        #expect(run.stdout.isEmpty, "exits other than 0 and 69: \(run.stdout)")
    }

    /// A limit a `process` run fits under only with few descriptors left open by its parent.
    static let tightLimit = 84

    /// `process` of `folder`'s p.json under `ulimit -n limit` with descriptors 3...2+leaked held open.
    static func process(leaked: Int, limit: Int, in folder: String, server: AssetServer) async throws -> ShellRun {
        try await Shell.run(
            "ulimit -n \(limit); for fd in $(seq 3 \(2 + leaked)); do eval \"exec $fd</dev/null\"; done; "
                + HostileInputTests.process + " p.json",
            in: folder,
            environment: ["CA": Fixtures.caFile, "MAP": "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)"])
    }
}
