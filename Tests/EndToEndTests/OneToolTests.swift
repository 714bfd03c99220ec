import Foundation
import TestSupport
import Testing

/// The commands acting as one tool, through the binary: outputs checked before any work, one
/// stdout, the umask's modes, no empty folder, one exit status for one mistake in every command,
/// help from the one table, and `batch -`.
@Suite struct OneToolTests {
    static let assets = Fixtures.root + "/Samples/assets"

    @Test func aBenchReportIntoAMissingFolderStopsBeforeTheBurst() async throws {
        for option in ["--json", "--html"] {
            let run = try await RichPushBinary.run([
                "bench", "--serve", Self.assets, "--devices", "5", "--no-progress", option, "/nonexistent/r",
            ])
            #expect(run.status == 74, "\(option): \(run.stderr)")
            #expect(run.stderr.contains("\(option): cannot write '/nonexistent/r'"), "\(run.stderr)")
            // No device ran: the burst's start line and report never came.
            #expect(!run.stderr.contains("devices") && run.stdout.isEmpty, "\(run.stderr)")
        }
    }

    @Test func aReportOnStdoutKeepsItForJQAndTheTextMovesToStderr() async throws {
        let run = try await RichPushBinary.run([
            "bench", "--serve", Self.assets, "--devices", "3", "--no-progress", "--json", "-",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        #expect(json?["devices"] as? Int == 3)
        #expect(run.stderr.contains("Display rate"), "the text report is on stderr")
        let twice = try await RichPushBinary.run([
            "bench", "--serve", Self.assets, "--devices", "3", "--json", "-", "--html", "/dev/stdout",
        ])
        #expect(twice.status == 64)
        #expect(twice.stderr.contains("only one output can go to stdout"), "\(twice.stderr)")
        #expect(twice.stdout.isEmpty)
    }

    @Test func aMergesHTMLIntoAMissingFolderPrintsNothing() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let report = folder + "/r.json"
        let bench = try await RichPushBinary.run([
            "bench", "--serve", Self.assets, "--devices", "2", "--no-progress", "--json", report,
        ])
        #expect(bench.status == 0, "\(bench.stderr)")
        let merge = try await RichPushBinary.run(["report", "merge", report, "--html", "/nonexistent/m.html"])
        #expect(merge.status == 74, "\(merge.stderr)")
        #expect(merge.stdout.isEmpty, "no JSON before the refusal")
        let toStdout = try await RichPushBinary.run(["report", "merge", report, "--html", "-"])
        #expect(toStdout.status == 64 && toStdout.stdout.isEmpty, "\(toStdout.stderr)")
    }

    @Test func filesFollowTheUmaskAndNothingEmptyIsLeft() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(#"{"aps":{"alert":"Hi"}}"#.utf8).write(to: URL(fileURLWithPath: folder + "/p.json"))
        // A payload that asks for no attachment stores nothing: no ./richpush-out is left.
        let plain = try await RichPushBinary.run(["process", "p.json", "--report", "report.json"], directory: folder)
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/richpush-out"))
        let mask = umask(0o022)
        umask(mask)
        var info = stat()
        #expect(stat(folder + "/report.json", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o666 & ~mask, "report mode \(String(info.st_mode & 0o777, radix: 8))")
        // An attachment too.
        let server = try Fixtures.startServer()
        defer { server.stop() }
        try Data(
            #"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg","type":"jpg"}}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: folder + "/a.json"))
        let attached = try await RichPushBinary.run(
            [
                "process", "a.json", "--out", "out", "--cacert", Fixtures.caFile, "--connect-to",
                "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)",
            ], directory: folder)
        #expect(attached.status == 0, "\(attached.stderr)")
        let stored = try FileManager.default.contentsOfDirectory(atPath: folder + "/out").filter {
            $0.hasSuffix(".jpg")
        }
        #expect(stored.count == 1)
        #expect(stat(folder + "/out/" + (stored.first ?? ""), &info) == 0)
        #expect(info.st_mode & 0o777 == 0o666 & ~mask, "attachment mode \(String(info.st_mode & 0o777, radix: 8))")
    }

    @Test func aCAFileWithoutACertificateIsTheSameRefusalInEveryCommand() async throws {
        let readme = Fixtures.root + "/README.md"
        let commands: [[String]] = [
            ["process", "--cacert", readme, "/dev/null"],
            ["fetch", "--cacert", readme, "https://127.0.0.1:9/a.jpg"],
            ["bench", "--cacert", readme, "--devices", "1", "--url", "https://127.0.0.1:9/a.jpg"],
            ["batch", "--cacert", readme, "--out", "/tmp/never-made-\(getpid())", Fixtures.root + "/Samples/payloads"],
            [
                "analytics", "flush", "--cacert", readme, "--app-group", Fixtures.root + "/Samples/app-group",
                "--endpoint", "http://127.0.0.1:9", "--external-id", "u",
            ],
        ]
        for words in commands {
            let run = try await RichPushBinary.run(words, environment: ["BRAZE_REST_API_KEY": "k"])
            #expect(run.status == 65, "\(words[0]): \(run.stderr)")
            #expect(run.stderr.contains("holds no certificate"), "\(words[0]): \(run.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: "/tmp/never-made-\(getpid())"))
        let app = try await RichPushBinary.run(["process", "--app", "/nonexistent", "/dev/null"])
        #expect(app.status == 65, "\(app.stderr)")
    }

    @Test func everyActionHasItsOwnHelpFromTheTable() async throws {
        let flush = try await RichPushBinary.run(["analytics", "flush", "--help"])
        for option in ["--attempts", "--backoff", "--timeout", "--verbose"] {
            #expect(flush.stdout.contains(option), "analytics flush --help lacks \(option)")
        }
        let bench = try await RichPushBinary.run(["bench", "--help"])
        for option in ["--seed", "--network", "--threshold"] { #expect(bench.stdout.contains("  " + option)) }
        let overview = try await RichPushBinary.run(["--help"])
        #expect(overview.stdout.contains("--version"))
        let version = try await RichPushBinary.run(["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("richpush "))
        // Completion scripts and the manual page, from the binary users install.
        let completion = try await RichPushBinary.run(["completions", "bash"])
        #expect(completion.status == 0 && completion.stdout.contains("complete -o filenames -F _richpush richpush"))
        let man = try await RichPushBinary.run(["help", "--man"])
        #expect(man.status == 0 && man.stdout.hasPrefix(".TH RICHPUSH 1"))
        #expect(try await RichPushBinary.run(["completions", "tcsh"]).status == 64)
        let shortVersion = try await RichPushBinary.run(["-V"])
        #expect(shortVersion.status == 0 && shortVersion.stdout == version.stdout, "-V is --version, as curl spells it")
        #expect(bench.stdout.contains("schema: bench/report.schema.json"))
        // The load tester's short options: -n devices, -c concurrency.
        let short = try await RichPushBinary.run(
            ["bench", "--serve", Fixtures.assets, "-n", "3", "-c", "1", "--budget", "30s", "--no-progress"],
            directory: Fixtures.root)
        #expect(short.status == 0 && short.stdout.contains("of 3 devices"), "\(short.stderr)")
        // A run bounded by time, as k6 writes it: --rate and --duration give the devices.
        let timed = try await RichPushBinary.run(
            ["bench", "--serve", Fixtures.assets, "--rate", "8", "--duration", "500ms", "--no-progress"],
            directory: Fixtures.root)
        #expect(timed.status == 0 && timed.stdout.contains("of 4 devices"), "\(timed.stdout)\(timed.stderr)")
        let overdetermined = try await RichPushBinary.run(
            ["bench", "--serve", Fixtures.assets, "-n", "4", "--rate", "8", "--duration", "1s"],
            directory: Fixtures.root)
        #expect(overdetermined.status == 64 && overdetermined.stderr.contains("give two of them"))
        #expect(FileManager.default.fileExists(atPath: Fixtures.root + "/bench/report.schema.json"))
        let wrong = try await RichPushBinary.run(["analytics", "flsuh"])
        #expect(wrong.status == 64 && wrong.stderr.contains("did you mean 'flush'"), "\(wrong.stderr)")
    }

    @Test func batchReadsNDJSONFromStdin() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let lines = #"{"aps":{"alert":"a"}}"# + "\n" + #"{"aps":{"alert":"b"}}"# + "\n"
        let run = try await RichPushBinary.run(
            ["batch", "-", "--out", "out", "--no-progress"], stdin: Data(lines.utf8), directory: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let results = try String(contentsOfFile: folder + "/out/results.ndjson", encoding: .utf8)
        #expect(results.split(separator: "\n").count == 2)
        // The same stdin again resumes: nothing is redone.
        let again = try await RichPushBinary.run(
            ["batch", "-", "--out", "out", "--no-progress"], stdin: Data(lines.utf8), directory: folder)
        #expect(again.status == 0 && again.stderr.contains("0 processed now, 2 done earlier"), "\(again.stderr)")
    }
}
