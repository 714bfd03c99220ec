import Foundation
import RichPush

/// `richpush process`: one payload through the emulated service extension.
enum ProcessCommand {
    static let help = """
        Run one APNs payload through the emulated Notification Service Extension.

        Usage: richpush process [options] < payload.json > mutated.json
               richpush process [options] payload.json

        Reads the payload (stdin, or the file given), decides what an iPhone running Braze's service
        extension would show, downloads and checks the attachment, stores it in --out, and writes the
        payload on stdout with one added top-level object, "richpush": the verdict, the reason code,
        warnings, and for an attached asset the local file, its UTI, size and SHA-256. Every other byte
        of the payload is kept as it was. A one-line verdict goes to stderr.

        Verdicts: attached, no-attachment (exit 0); fallback, expired, not-invoked (exit 1);
        rejected (exit 65). Usage errors exit 64; an unwritable output exits 74; Ctrl-C exits 130
        and leaves no file behind.

        Options:
          --out DIR               Where attachments are stored (default ./richpush-out).
          --budget SECONDS        The extension's time budget, one deadline for the run (default 30).
          --connect-timeout SEC   Time allowed for DNS, TCP and TLS (default 10).
          --allow-http            Emulate an extension whose Info.plist allows arbitrary loads;
                                  without it, App Transport Security blocks http:// URLs.
          --cacert FILE           Trust this CA (PEM) besides the system's (the test CA is
                                  Samples/certs/ca.pem).
          --connect-to H:P:H2:P2  Send connections for H:P to H2:P2, as curl does. Repeatable.
          --max-redirs N          Redirects followed at most (default 5).
          --stall-window SECONDS  Fail when under 1 byte/s arrives for this long (default: off; the
                                  device waits out the budget).
          --push-type TYPE        alert (4096-byte limit) or voip (5120); default alert.
          --binary-mb             Count Apple's size caps in 2^20-byte megabytes (default 10^6).
          --report FILE           Also write the full outcome as JSON (download timings, sniffed type).
          --fsync                 fsync each file before it gets its name (survives power loss; slower).
          --quiet                 No verdict line on stderr.

        Example:
          richpush serve &      # prints its URLs, e.g. https://127.0.0.1:40123/
          echo '{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg","type":"jpg"}}}' |
            richpush process --cacert Samples/certs/ca.pem --connect-to cdn.example.com:443:127.0.0.1:40123 --out out
        """

    /// The largest input read; anything larger is far over APNs' limit and only its size matters.
    static let readLimit = 1 << 20

    static func run(_ arguments: Arguments) async throws -> ExitCode {
        var arguments = arguments
        let folder = try arguments.value("--out") ?? "richpush-out"
        let reportPath = try arguments.value("--report")
        let quiet = arguments.flag("--quiet", "-q")
        let durable = arguments.flag("--fsync")
        let policy = try extensionPolicy(&arguments)
        let positionals = try arguments.positionals()
        guard positionals.count <= 1 else { throw UsageError("process takes one payload file (or stdin)") }
        let source = positionals.first ?? "-"
        let store: AttachmentStore
        do { store = try AttachmentStore(folder: folder, durable: durable) } catch {
            printError("richpush process: \(error.message)")
            return .ioError
        }
        let engine = try FetchEngine(loops: 1)
        defer {
            engine.shutdown()
            store.removeScratch()
        }
        let service = ServiceExtension(engine: engine, store: store, policy: policy)
        let result: ProcessResult
        switch readInput(source) {
        case .success(let bytes):
            // Ctrl-C or SIGTERM ends the download cleanly (its temporary file is removed), then exits 130.
            let run = await runInterruptibly { await service.process(bytes) }
            result = run.value
            if run.interrupted {
                printError("richpush process: interrupted; nothing was written.")
                return .interrupted
            }
        case .failure(let failure): result = .unreadable(failure.message)
        }
        if let mutated = result.mutatedPayload {
            let text = mutated.last == UInt8(ascii: "\n") ? mutated : mutated + [UInt8(ascii: "\n")]
            guard writeAll(text, to: 1) else {
                printError("richpush process: cannot write the payload to stdout: \(String(cString: strerror(errno)))")
                return .ioError
            }
        }
        if let reportPath {
            do {
                try writeReport(result.outcome, to: reportPath)
            } catch {
                printError("richpush process: cannot write the report to '\(reportPath)': \(error)")
                return .ioError
            }
        }
        if !quiet { printError("richpush: " + result.outcome.summaryLine) }
        return ExitCode(rawValue: result.outcome.verdict.exitStatus) ?? .failure
    }

    /// Reads the payload from a file or stdin ("-"), at most ``readLimit`` bytes plus one.
    static func readInput(_ source: String) -> Result<[UInt8], ReadFailure> {
        let descriptor: Int32 = source == "-" ? 0 : open(source, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            return .failure(
                ReadFailure(message: "cannot read '\(source)': \(String(cString: strerror(errno))). Check the path."))
        }
        defer { if descriptor != 0 { close(descriptor) } }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= readLimit {
            let got = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else {
                return .failure(ReadFailure(message: "cannot read '\(source)': \(String(cString: strerror(errno)))."))
            }
            if got == 0 { break }
            bytes += chunk[0..<got]
        }
        return .success(bytes)
    }

    struct ReadFailure: Error {
        var message: String
    }

    /// Writes every byte to a descriptor, retrying short writes; false on error (EPIPE included).
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
    }

    /// Writes the outcome as JSON next to `path` and renames it into place, so a reader never sees half.
    static func writeReport(_ outcome: Outcome, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).part")
        try Data((try JSON.string(outcome, pretty: true) + "\n").utf8).write(to: temporary)
        guard rename(temporary.path, url.path) == 0 else {
            unlink(temporary.path)
            throw UsageError(String(cString: strerror(errno)))
        }
    }

    /// Reads the options every command that runs the extension shares.
    static func extensionPolicy(_ arguments: inout Arguments) throws -> ExtensionPolicy {
        var policy = ExtensionPolicy()
        if let seconds: Double = try arguments.number("--budget", in: 0.001...3600) {
            policy.budget = .milliseconds(Int64(seconds * 1000))
        }
        if let type = try arguments.value("--push-type") {
            guard let pushType = ExtensionPolicy.PushType(rawValue: type.lowercased()) else {
                throw UsageError(
                    "--push-type takes one of \(ExtensionPolicy.PushType.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            policy.pushType = pushType
        }
        policy.binaryMegabytes = arguments.flag("--binary-mb")
        policy.fetch = try FetchCommand.policyOptions(&arguments)
        return policy
    }
}
