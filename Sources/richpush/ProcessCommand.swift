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
        do { store = try AttachmentStore(folder: folder, durable: durable, recordsNewFiles: true) } catch {
            printError("richpush process: \(error.message)")
            return .ioError
        }
        let engine: FetchEngine
        do { engine = try FetchEngine(loops: 1) } catch {
            printError("richpush process: \(engineFailure(error))")
            return .software
        }
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
                store.removeNewFiles()
                printError("richpush process: interrupted; nothing was written.")
                return .interrupted
            }
        case .failure(let failure): result = .unreadable(failure.message)
        }
        if let mutated = result.mutatedPayload {
            let text = mutated.last == UInt8(ascii: "\n") ? mutated : mutated + [UInt8(ascii: "\n")]
            do { try SystemCall.writeAll(1, text, path: "stdout") } catch {
                // The payload names the stored file: without the payload, the file is taken back.
                store.removeNewFiles()
                printError("richpush process: \(error.message)")
                return .ioError
            }
        }
        if let reportPath {
            do {
                try writeOutput(Array((try JSON.string(result.outcome, pretty: true) + "\n").utf8), to: reportPath)
            } catch {
                store.removeNewFiles()
                printError("richpush process: cannot write the report: \(error)")
                return .ioError
            }
        }
        if !quiet { printError("richpush: " + verdictLine(result.outcome)) }
        return ExitCode(rawValue: result.outcome.verdict.exitStatus) ?? .failure
    }

    /// The verdict line, with every payload-derived text escaped so it stays on its own lines.
    static func verdictLine(_ outcome: Outcome) -> String {
        var shown = outcome
        shown.message = outcome.message.escapingControlCharacters
        shown.hint = outcome.hint?.escapingControlCharacters
        shown.warnings = outcome.warnings.map {
            Warning($0.code.escapingControlCharacters, $0.message.escapingControlCharacters)
        }
        shown.attachment?.file = outcome.attachment?.file?.escapingControlCharacters
        return shown.summaryLine
    }

    /// Why the fetch engine could not start, in words: out of file descriptors is said as such.
    static func engineFailure(_ error: FetchError) -> String {
        guard SystemCall.descriptorsExhausted() else { return "\(error.message)" }
        return "cannot start the download engine: too many open files (the limit is "
            + "\(SystemCall.descriptorLimit)). Raise it with 'ulimit -n 1024' and run again."
    }

    /// Reads the payload from a file or stdin ("-"), at most ``readLimit`` bytes plus one.
    ///
    /// A named input must be a regular file: a FIFO with no writer would block forever, a device
    /// might never end. Stdin is read as it is (a pipe is the usual case), with the same bound.
    static func readInput(_ source: String) -> Result<[UInt8], ReadFailure> {
        do throws(SystemError) {
            guard source != "-" else { return .success(try readStandardInput()) }
            let descriptor = try SystemCall.openRegularFile(source)
            defer { close(descriptor) }
            return .success(try SystemCall.readAll(descriptor, upTo: readLimit + 1, path: source))
        } catch {
            let hint = error.reason != nil ? " Give a payload file, or '-' to read stdin." : ""
            return .failure(ReadFailure(message: error.message.escapingControlCharacters + hint))
        }
    }

    /// Reads stdin to its end (at most ``readLimit`` bytes plus one), giving up when SIGINT or
    /// SIGTERM arrives: a pipe whose writer never finishes must not make Ctrl-C ineffective.
    static func readStandardInput() throws(SystemError) -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count <= readLimit {
            var ready = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            let count = poll(&ready, 1, 100)
            if TerminationSignal.received { return [] }
            if count < 0 && errno != EINTR { throw SystemError.current("read", path: "stdin") }
            guard count > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: min(64 * 1024, readLimit + 1 - bytes.count))
            let wanted = chunk.count
            let got = try SystemCall.retrying("read", path: "stdin") { read(0, &chunk, wanted) }
            if got == 0 { break }
            bytes += chunk[0..<got]
        }
        return bytes
    }

    struct ReadFailure: Error {
        var message: String
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
