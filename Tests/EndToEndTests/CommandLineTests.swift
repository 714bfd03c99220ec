import AssetServer
import Foundation
import RichPush
import RichPushCLI
import TestSupport
import Testing

/// One command line: the exit-code table, "did you mean", outputs that behave like curl's, batch preflight.
///
/// Serialized: dozens of short runs at once would starve the timing-sensitive suites beside it on two cores.
@Suite(.serialized) struct CommandLineTests {
    static let noAttachment = #"{"aps":{"alert":"Hi","mutable-content":1}}"#

    /// A mistake, the exit code the table gives it, and a phrase the message must carry.
    struct Mistake: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var status: Int32
        var says: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let mistakes: [Mistake] = [
        Mistake(arguments: [], status: 64, says: "Commands:"),
        Mistake(arguments: ["proces"], status: 64, says: "Did you mean 'process'?"),
        Mistake(arguments: ["process", "--budgte", "5"], status: 64, says: "did you mean --budget?"),
        Mistake(arguments: ["process", "--alow-http=1"], status: 64, says: "did you mean --allow-http?"),
        Mistake(arguments: ["batch", "in", "--out", "o", "--concurency", "2"], status: 64, says: "--concurrency?"),
        Mistake(arguments: ["fetch", "--cacret", "x", "https://a/"], status: 64, says: "did you mean --cacert?"),
        Mistake(
            arguments: ["fetch", "cdn.example.com/hero.jpg"], status: 64, says: "https://cdn.example.com/hero.jpg"),
        Mistake(arguments: ["process", "--push-type", "x"], status: 64, says: "--push-type takes one of"),
        Mistake(arguments: ["serve", "--cert", "p.json", "assets"], status: 64, says: "--cert needs --key"),
        Mistake(
            arguments: ["analytics", "record", "--app-group", "g", "--event", "a", "--event", "b"], status: 64,
            says: "record takes one --event per call (got 2: a, b)"),
        Mistake(arguments: ["process", "--out", "/proc/x", "p.json"], status: 74, says: "'/proc/x': No such file"),
        Mistake(arguments: ["process", "missing.json"], status: 65, says: "missing.json"),
        Mistake(arguments: ["process", "--cacert", "missing.pem", "p.json"], status: 65, says: "missing.pem"),
        Mistake(arguments: ["batch", "missing", "--out", "o"], status: 65, says: "does not exist"),
        Mistake(arguments: ["batch", "notes.md", "--out", "o"], status: 65, says: "neither NDJSON"),
        Mistake(arguments: ["serve", "missing"], status: 65, says: "does not exist"),
        Mistake(arguments: ["sniff", "missing"], status: 65, says: "missing"),
        Mistake(arguments: ["demo", "--samples", "missing"], status: 65, says: "missing"),
        Mistake(arguments: ["process", "--report", "nofolder/r.json", "p.json"], status: 74, says: "does not exist"),
        Mistake(arguments: ["process", "--report", "assets", "p.json"], status: 74, says: "folder"),
        Mistake(arguments: ["fetch", "-o", "nofolder/x", "https://127.0.0.1:9/x"], status: 74, says: "--output:"),
        Mistake(
            arguments: ["batch", "p.json", "--out", "o", "--junit", "nofolder/j.xml"], status: 74, says: "--junit"),
    ]

    /// A folder with a payload, a text file, and an assets folder, for the mistakes to run in.
    static func workFolder() throws -> String {
        let folder = try Fixtures.temporaryFolder("richpush-cli")
        _ = FileManager.default.createFile(atPath: folder + "/p.json", contents: Data(noAttachment.utf8))
        _ = FileManager.default.createFile(
            atPath: folder + "/notes.md", contents: Data("# Notes\n\nSome text.\n- a list\n".utf8))
        try FileManager.default.createDirectory(atPath: folder + "/assets", withIntermediateDirectories: true)
        return folder
    }

    @Test(arguments: mistakes)
    func everyMistakeGetsItsCodeFromTheTable(_ mistake: Mistake) async throws {
        let folder = try Self.workFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try await RichPushBinary.run(mistake.arguments, directory: folder)
        #expect(run.status == mistake.status, "\(run.stderr)")
        #expect(run.stderr.contains(mistake.says), "\(run.stderr)")
        #expect(run.stdout.isEmpty, "nothing on stdout for a run that failed: \(run.stdout)")
        for leak in ["Error Domain", "NSCocoaErrorDomain", "DecodingError", "Swift."] {
            #expect(!run.stderr.contains(leak), "\(run.stderr)")
        }
    }

    @Test func anUnknownCommandPrintsTheCommandListNotTheWholeHelp() async throws {
        let run = try await RichPushBinary.run(["frobnicate"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("unknown command 'frobnicate'"))
        #expect(run.stderr.contains("process [FILE]") && run.stderr.contains("sniff FILE..."))
        #expect(!run.stderr.contains("Exit status"), "the list only, not the overview: \(run.stderr)")
        #expect(!run.stderr.contains("Did you mean"), "nothing is close to frobnicate")
        // The way on is the overview, not the help of a command that does not exist.
        #expect(run.stderr.contains("Run 'richpush --help' for usage."), "\(run.stderr)")
        #expect(!run.stderr.contains("frobnicate --help"), "\(run.stderr)")
        let option = try await RichPushBinary.run(["process", "--budgte", "3"])
        #expect(option.stderr.contains("Run 'richpush process --help' for usage."), "\(option.stderr)")
    }

    @Test(arguments: ["process", "batch", "bench", "report", "demo", "serve", "fetch", "sniff"])
    func everyHelpEndsWithTheExitCodeTable(_ command: String) async throws {
        let run = try await RichPushBinary.run([command, "--help"])
        #expect(run.status == 0)
        // The table once, with a line for every status (a command words some of them its own way).
        #expect(run.stdout.components(separatedBy: "Exit status:").count == 2, "\(command)")
        for code in ExitCode.allCases {
            #expect(run.stdout.contains("\n  \(code.rawValue) "), "\(command): exit \(code.rawValue)")
        }
    }

    @Test func aServerThatCannotBindItsPortIs69() async throws {
        let busy = try Fixtures.startServer()
        defer { busy.stop() }
        let folder = try Self.workFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try await Shell.run(
            "exec \"$RP\" serve assets --no-tls --port \(busy.httpPort)", in: folder)
        #expect(run.status == 69, "\(run.stderr)")
        #expect(run.stderr.contains("could not start"), "\(run.stderr)")
    }

    // MARK: Outputs

    @Test func aDashReportGoesToStdoutAfterThePayload() async throws {
        let folder = try Self.workFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try await RichPushBinary.run(["process", "--report", "-", "p.json"], directory: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let documents = run.stdout.split(separator: "\n").filter { $0.hasPrefix("{") }
        #expect(documents.count == 2, "the payload, then the report: \(run.stdout)")
        #expect(documents.first?.contains("\"richpush\"") == true)
        #expect(run.stdout.contains("\"verdict\" : \"no-attachment\""), "\(run.stdout)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/-"))
    }

    @Test func aFIFOAndALinkAreWrittenThroughNeverRenamedOver() async throws {
        let folder = try Self.workFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let script = """
            mkfifo report.fifo
            cat report.fifo > from-fifo.txt &
            reader=$!
            "$RP" process --report report.fifo p.json > /dev/null || exit 10
            wait $reader
            echo old > real.json
            ln -s real.json link.json
            "$RP" process --report link.json p.json > /dev/null || exit 11
            [ -p report.fifo ] || exit 12
            [ -L link.json ] || exit 13
            "$RP" process --report /dev/stdout p.json > via-dev-stdout.txt || exit 14
            """
        let run = try await Shell.run(script, in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let fromFIFO = try String(contentsOfFile: folder + "/from-fifo.txt", encoding: .utf8)
        #expect(fromFIFO.contains("\"verdict\" : \"no-attachment\""), "\(fromFIFO)")
        let real = try String(contentsOfFile: folder + "/real.json", encoding: .utf8)
        #expect(real.contains("\"verdict\""), "the link's target gets the report: \(real)")
        let viaStdout = try String(contentsOfFile: folder + "/via-dev-stdout.txt", encoding: .utf8)
        #expect(viaStdout.contains("\"richpush\"") && viaStdout.contains("\"verdict\" : "), "\(viaStdout)")
        #expect(Fixtures.files(in: folder).allSatisfy { !$0.hasSuffix(".part") })
    }

    /// A FIFO that nothing reads would block the open at the end of the run, after all the work (and a
    /// signal would not end it): it is refused when the outputs are opened, before any work, with 74.
    @Test func aFIFOThatNothingReadsIsRefusedBeforeAnyWork() async throws {
        let folder = try Self.workFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let script = """
            mkfifo unread.fifo
            timeout -s KILL 60 "$RP" process --report unread.fifo p.json > process.out 2> process.err
            echo "process $?"
            timeout -s KILL 60 "$RP" bench --url https://127.0.0.1:9/hero.jpg --devices 1 --no-progress \
                --json unread.fifo > bench.out 2> bench.err
            echo "bench $?"
            timeout -s KILL 60 "$RP" fetch https://127.0.0.1:9/hero.jpg -o unread.fifo 2> fetch.err
            echo "fetch $?"
            """
        let run = try await Shell.run(script, in: folder)
        #expect(run.stdout == "process 74\nbench 74\nfetch 74\n", "\(run.stdout)\(run.stderr)")
        for command in ["process", "bench", "fetch"] {
            let stderr = (try? String(contentsOfFile: folder + "/\(command).err", encoding: .utf8)) ?? ""
            #expect(stderr.contains("unread.fifo") && stderr.contains("nothing reads"), "\(command): \(stderr)")
        }
        #expect((try? String(contentsOfFile: folder + "/process.out", encoding: .utf8)) == "", "no payload printed")
    }

    @Test func fetchWritesTheBodyToStdoutOnlyWhenTheDownloadSucceeded() async throws {
        let server = try Fixtures.startServer()
        defer { server.stop() }
        let folder = try Self.workFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let base = [
            "fetch", "-o", "-", "--cacert", Fixtures.caFile, "--connect-to",
            "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)",
        ]
        let body = folder + "/body"
        let run = try await RichPushBinary.run(base + ["https://cdn.example.com/hero.jpg"], stdoutPath: body)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            Array(FileManager.default.contents(atPath: body) ?? Data()) == (try Fixtures.bytes(ofAsset: "hero.jpg")))
        #expect(run.stderr.contains("\"ok\":true"), "the report goes to stderr: \(run.stderr)")
        let failed = try await RichPushBinary.run(base + ["https://cdn.example.com/hero.jpg?truncate=1000"])
        #expect(failed.status == 1, "\(failed.stderr)")
        #expect(failed.stdout.isEmpty, "no partial body on stdout")
    }

    @Test func aTLSFailureSaysToPassTheServersCA() async throws {
        let server = try Fixtures.startServer()
        defer { server.stop() }
        let map = "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)"
        let fetch = try await RichPushBinary.run(["fetch", "--connect-to", map, "https://cdn.example.com/hero.jpg"])
        #expect(fetch.status == 1)
        #expect(fetch.stderr.contains("--cacert"), "\(fetch.stderr)")
        let payload =
            #"{"aps":{"mutable-content":1,"alert":"x"},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg","type":"jpg"}}}"#
        let folder = try Fixtures.temporaryFolder("richpush-cli")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let process = try await RichPushBinary.run(
            ["process", "--connect-to", map, "--out", folder], stdin: Data(payload.utf8))
        #expect(process.status == 1)
        #expect(process.stderr.contains("--cacert"), "\(process.stderr)")
    }

    // MARK: Batch preflight and progress

    @Test func batchTakesAPrettyPrintedPayloadFileAsOnePayload() async throws {
        let folder = try Self.workFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let pretty = "{\n  \"aps\": {\n    \"alert\": \"Hi\",\n    \"mutable-content\": 1\n  }\n}\n"
        _ = FileManager.default.createFile(atPath: folder + "/pretty.json", contents: Data(pretty.utf8))
        let run = try await RichPushBinary.run(
            ["batch", "pretty.json", "--out", "out", "--no-progress"], directory: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let results = try String(contentsOfFile: folder + "/out/results.ndjson", encoding: .utf8)
        #expect(results.split(separator: "\n").count == 1, "\(results)")
        #expect(results.contains("\"verdict\":\"no-attachment\""), "\(results)")
    }

    @Test func aResumeWithOtherOptionsStopsAndNamesThem() async throws {
        let folder = try Self.workFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let base = ["batch", "p.json", "--out", "out", "--no-progress"]
        let first = try await RichPushBinary.run(base + ["--budget", "3"], directory: folder)
        #expect(first.status == 0, "\(first.stderr)")
        let changed = try await RichPushBinary.run(base + ["--budget", "5", "--allow-http"], directory: folder)
        #expect(changed.status == 64, "\(changed.stderr)")
        #expect(changed.stderr.contains("--budget was 3 s, now 5 s"), "\(changed.stderr)")
        #expect(changed.stderr.contains("--allow-http was off, now on"), "\(changed.stderr)")
        #expect(changed.stderr.contains("--force"))
        let same = try await RichPushBinary.run(base + ["--budget", "3"], directory: folder)
        #expect(same.status == 0, "\(same.stderr)")
        #expect(same.stderr.contains("1 done earlier"), "\(same.stderr)")
        let forced = try await RichPushBinary.run(base + ["--budget", "5", "--force"], directory: folder)
        #expect(forced.status == 0, "\(forced.stderr)")
        let after = try await RichPushBinary.run(base + ["--budget", "5"], directory: folder)
        #expect(after.status == 0, "the forced run's options are the ones recorded: \(after.stderr)")
    }

    @Test func progressPrintsALineEverySecondInALogWhileNothingCompletes() async throws {
        let server = try Fixtures.startServer()
        defer { server.stop() }
        let folder = try Self.workFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let slow =
            #"{"aps":{"mutable-content":1,"alert":"x"},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg?delay=3500","type":"jpg"}}}"#
        _ = FileManager.default.createFile(atPath: folder + "/slow.ndjson", contents: Data((slow + "\n").utf8))
        let run = try await RichPushBinary.run(
            [
                "batch", "slow.ndjson", "--out", "out", "--progress", "--budget", "60", "--cacert", Fixtures.caFile,
                "--connect-to", "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)",
            ], directory: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let waiting = run.stderr.split(separator: "\n").filter { $0.hasPrefix("[0/1]") && $0.contains("in flight 1") }
        #expect(waiting.count >= 2, "a line a second while the payload waits: \(run.stderr)")
        #expect(!run.stderr.contains("\u{1B}["), "no terminal codes in a log")
        #expect(run.stderr.contains("[1/1]"), "\(run.stderr)")
    }
}
