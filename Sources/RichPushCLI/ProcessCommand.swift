import Foundation
import POSIXKit
import RichPush
import RichPushRuns

/// `richpush process`: one payload through the emulated service extension.
enum ProcessCommand {
    /// `-v`, `--verbose`, on process and fetch.
    static let verbose: Key<Bool> = .flag(
        Option(
            "--verbose", nil,
            "Print the download's trace on stderr, as curl -v does (address, TLS version and cipher, ALPN, "
                + "certificate, request and response headers, timings).", aliases: ["-v"]))

    /// `--braze-request FILE`: compose first, then run the composed payload.
    static let brazeRequest: Key<String?> = .text(
        Option(
            "--braze-request", "FILE",
            "Read a Braze /messages/send body (or apple_push object) instead of a payload: compose it as 'richpush "
                + "compose' does, then run the composed payload; its apns-push-type decides invocation, and the outcome's "
                + "'composed' keeps the request's file and the payload. A request Braze would refuse is rejected "
                + "(request-refused, exit 65) with Braze's words.",
            example: "Samples/requests/rich-image.json"))

    // The options of this command, each declared once and read through its key.
    static let junit = Keys.junit("one test case for the payload, failed unless it shows as intended")
    static let out: Key<String?> = .text(
        Option(
            .out, "DIR", "Where attachments are stored (default ./\(defaultFolder); made only when one is).",
            example: "out"))
    static let report: Key<String?> = .text(
        Option(
            "--report", "FILE",
            "Also write the full outcome as JSON (download timings, sniffed type); '-' is stdout, after the payload.",
            example: "report.json"))
    static let quiet: Key<Bool> = .flag(Option("--quiet", nil, "No verdict line on stderr.", aliases: ["-q"]))

    static let command = Command(
        name: "process", synopsis: "process [FILE]",
        summary: "Run one payload (stdin or FILE) through the emulated extension; mutated payload on stdout.",
        about: """
            Run one APNs payload through the emulated Notification Service Extension.

            Usage: richpush process [options] < payload.json > mutated.json
                   richpush process [options] payload.json

            Reads the payload (stdin, or the file given), decides what an iPhone running Braze's service
            extension would show, downloads and checks the attachment, stores it in --out, and writes the
            payload on stdout with one added top-level object, "richpush": the verdict, the reason code,
            warnings, and for an attached asset the local file, its UTI, size and SHA-256. Every other byte
            of the payload is kept as it was. A one-line verdict goes to stderr.

            Verdicts: attached, no-attachment (exit 0); fallback, expired, not-invoked (exit 1); rejected, or
            a payload file that cannot be read (exit 65). An attachment that shows but that a content
            extension of --app would crash on (would-crash) or not show (configuration-error) is exit 1 too.
            Ctrl-C leaves no file behind.
            """,
        options: [
            OptionGroup(
                "Options",
                [
                    out,
                    report,
                    junit,
                    quiet,
                    verbose, brazeRequest,
                ]),
            .extensionPolicy(), .app, .download, .tracking, .output,
        ],
        footer: """
            Example:
              richpush serve &      # prints its URLs, e.g. https://127.0.0.1:40123/
              echo '{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg","type":"jpg"}}}' |
                richpush process --cacert Samples/certs/ca.pem --connect-to cdn.example.com:443:127.0.0.1:40123 --out out
            """,
        exitNotes: [
            .failure:
                "the attachment would not show (fallback, expired, not-invoked), or a content extension would crash on it or not show it",
            .dataError:
                "the payload cannot be read, or APNs would refuse it (rejected); a missing --app, --cacert or plist",
        ],
        run: { try await run($0) })

    /// Where attachments go without --out.
    static let defaultFolder = "richpush-out"

    /// The largest input read; anything larger is far over APNs' limit and only its size matters.
    static let readLimit = 1 << 20

    static func run(_ arguments: Arguments) async throws -> ExitCode {
        var arguments = arguments
        let output = try OutputOptions(parsing: &arguments, out: out, defaultFolder: defaultFolder)
        let reportPath = try arguments.read(Self.report)
        let junitPath = try arguments.read(Self.junit)
        let quiet = try arguments.read(Self.quiet)
        let verbose = try arguments.read(Self.verbose)
        let requestFile = try arguments.read(Self.brazeRequest)
        let policyOptions = try PolicyOptions(parsing: &arguments, allowsEveryVersion: true)
        var policy = policyOptions.policy
        policy.fetch.tracesTransfer = verbose
        var tracking = try TrackOptions(parsing: &arguments, policy: policy)
        let positionals = try arguments.positionals()
        guard positionals.count <= 1 else { throw UsageError("process takes one payload file (or stdin)") }
        var composition: Composition?
        var refused: ProcessResult?
        if let requestFile {
            guard positionals.isEmpty else {
                throw UsageError("process takes a payload file or --braze-request FILE, not both")
            }
            let bytes = try ComposeCommand.readOrFail(requestFile, what: "--braze-request file")
            switch composedRequest(bytes, file: requestFile) {
            case .success(let push):
                if policy.pushType != .alert && policy.pushType != push.headers.pushType {
                    throw UsageError(
                        "--push-type \(policy.pushType.rawValue) disagrees with the request, which composes into an "
                            + "apns-push-type: \(push.headers.pushType.rawValue) push; leave --push-type out")
                }
                policy.pushType = push.headers.pushType
                composition = Composition(request: requestFile, push: push)
            case .failure(let refusal):
                // Nothing is delivered: the verdict (rejected, request-refused) is reported as any other.
                refused = .refused(refusal, bytes: bytes.count)
            }
        }
        let request = refused
        if policyOptions.everyVersion {
            guard reportPath == nil, junitPath == nil, tracking.endpoint == nil else {
                throw UsageError("--ios all prints one line per version; leave out --report and delivery tracking")
            }
            if let request { return try await everyVersion(request: request, bytes: nil, policy, output, quiet) }
            let bytes: [UInt8]
            switch composition.map({ .success(Array($0.payload.utf8)) }) ?? readInput(positionals.first ?? "-") {
            case .success(let read): bytes = read
            case .failure(let failure): throw CommandFailure(.dataError, failure.message)
            }
            return try await everyVersion(request: nil, bytes: bytes, policy, output, quiet)
        }
        // Every output is checked before the work: a report into a missing folder writes nothing.
        let report = try OutputOptions.prepare(reportPath, option: "--report")
        defer { report?.discard() }
        let junit = try OutputOptions.prepare(junitPath, option: "--junit")
        defer { junit?.discard() }
        let phone = policy.device.description
        let tracker = try tracking.start()
        defer { tracking.stop() }
        let tracked = tracking
        // The session (its store and engine) lives for this block only: closed however it ends.
        return try await ProcessSession.with(
            policy: policy, folder: output.folder ?? "richpush-out", durable: output.durable, tracker: tracker
        ) { session in
            var result: ProcessResult
            let input: Result<[UInt8], ReadFailure>? =
                request != nil
                ? nil : composition.map { .success(Array($0.payload.utf8)) } ?? readInput(positionals.first ?? "-")
            switch input {
            case nil:
                result = request ?? .unreadable("no input")
            case .success(let bytes)?:
                // Ctrl-C or SIGTERM ends the download cleanly (its temporary file is removed), then exits 130.
                let run = await runInterruptibly { await session.process(bytes) }
                result = run.value
                if run.interrupted {
                    session.removeNewFiles()
                    printError("richpush process: interrupted; nothing was written.")
                    return .interrupted
                }
            case .failure(let failure)?:
                result = .unreadable(failure.message, outOfDescriptors: failure.outOfDescriptors)
            }
            if let composition { result.keep(composition) }
            do { try write(result, report: report, durable: output.durable) } catch {
                // The payload names the stored file: without the payload and its report, the file is taken back.
                session.removeNewFiles()
                throw error
            }
            if let junit {
                var xml = JUnitReport()
                xml.suiteName = "richpush process"
                xml.wallSeconds = result.outcome.elapsedMilliseconds / 1000
                xml.properties = [("richpush.version", RichPushCommand.version), ("richpush.phone", phone)]
                let name = requestFile ?? positionals.first ?? "stdin"
                if name != "stdin" && name != "-" { xml.inputRoot = (name as NSString).deletingLastPathComponent }
                xml.add(result.outcome, input: (name as NSString).lastPathComponent)
                try commit(Array(xml.xml.utf8), to: junit, option: "--junit", durable: output.durable)
            }
            for line in result.outcome.trace ?? [] { printError(line) }
            if !quiet {
                printError("richpush: " + result.outcome.escapedSummaryLine)
                if let advice = TLSOptions.advice(for: result.outcome.tlsProblem, caFile: policy.fetch.caFile) {
                    printError(advice)
                }
            }
            // Path A: the delivery event goes out after the verdict, which it never delays.
            _ = await tracked.flush()
            return ExitStatus.code(for: result.outcome)
        }
    }

    /// `--ios all`: the payload judged on each of ``DeviceVersion/every``, one JSON line each on stdout
    /// (`{"ios", "linked_sdk", "verdict", "reason", "message", "hint", "warnings"}`) and a table on
    /// stderr; the exit status is the worst of them (0 only when every version shows the payload).
    static func everyVersion(
        request: ProcessResult?, bytes: [UInt8]?, _ policy: ExtensionPolicy, _ output: OutputOptions, _ quiet: Bool
    ) async throws -> ExitCode {
        var worst = ExitCode.success
        var lines: [String] = []
        for device in DeviceVersion.every {
            var judged = policy
            judged.device = device
            // The CFNetwork and Darwin of the version's release; a User-Agent the user gave stays as given.
            judged.fetch.userAgent = DeviceUserAgent.retargeting(policy.fetch.userAgent, to: device.ios)
            let outcome: Outcome
            if let request {
                outcome = request.outcome
            } else {
                let run = try await ProcessSession.with(
                    policy: judged, folder: output.folder ?? "richpush-out", durable: output.durable, tracker: nil
                ) { session in await runInterruptibly { await session.process(bytes ?? []) } }
                if run.interrupted {
                    printError("richpush process: interrupted.")
                    return .interrupted
                }
                outcome = run.value.outcome
            }
            let json = JSONValue.object([
                ("ios", .string(device.ios.description)), ("linked_sdk", .string(device.linkedSDK.description)),
                ("verdict", .string(outcome.verdict.rawValue)), ("reason", .string(outcome.reason.rawValue)),
                ("message", .string(outcome.message)), ("hint", outcome.hint.map { .string($0) } ?? .null),
                ("warnings", .array(outcome.warnings.map { .string($0.code) })),
            ])
            do { try SystemCall.writeAll(1, json.utf8 + [UInt8(ascii: "\n")], path: "stdout") } catch {
                throw CommandFailure(.ioError, error.message)
            }
            let name = device.description.padding(toLength: 52, withPad: " ", startingAt: 0)
            lines.append("  \(name) \(outcome.verdict.rawValue) [\(outcome.reason.rawValue)]")
            let code = ExitStatus.code(for: outcome)
            if code != .success, worst == .success || code == .dataError { worst = code }
        }
        if !quiet {
            printError("richpush: the payload on each version:\n" + lines.joined(separator: "\n"))
        }
        return worst
    }

    /// The request `bytes` (from `file`) composed as Braze would deliver it, or Braze's refusal; the
    /// composer's warnings go to stderr.
    static func composedRequest(_ bytes: [UInt8], file: String) -> Result<ComposedPush, ComposeRefusal> {
        let composed = Composer.compose(bytes)
        for warning in (try? composed.get())?.warnings ?? [] {
            printError(
                "richpush process: \(file): warning [\(warning.code)]: \(warning.message)".escapingControlCharacters)
        }
        return composed
    }

    /// Writes the report (when asked for), the mutated payload on stdout, then puts the report in place.
    private static func write(_ result: ProcessResult, report: PendingOutput?, durable: Bool) throws {
        if let report {
            do {
                let text = result.outcome.json.prettyText + "\n"
                try SystemCall.writeAll(report.descriptor, Array(text.utf8), path: report.displayPath)
            } catch {
                throw CommandFailure(.ioError, "--report: \(ExitStatus.failure(for: error).message)")
            }
        }
        if let mutated = result.mutatedPayload {
            let text = mutated.last == UInt8(ascii: "\n") ? mutated : mutated + [UInt8(ascii: "\n")]
            do { try SystemCall.writeAll(1, text, path: "stdout") } catch {
                throw CommandFailure(.ioError, error.message)
            }
        }
        if let report {
            do { try report.commit(durable: durable) } catch {
                throw CommandFailure(.ioError, "--report: \(error.message)")
            }
        }
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
            return .failure(
                ReadFailure(
                    message: error.message.escapingControlCharacters + hint,
                    outOfDescriptors: error.isDescriptorExhaustion))
        }
    }

    /// Reads stdin to its end (at most ``readLimit`` bytes plus one), giving up when SIGINT or
    /// SIGTERM arrives: a pipe whose writer never finishes must not make Ctrl-C ineffective.
    static func readStandardInput() throws(SystemError) -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count <= readLimit {
            let ready = try SystemCall.waitReadable(0, milliseconds: 100, path: "stdin")
            if TerminationSignal.received { return [] }
            guard ready != 0 else { continue }
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
        /// The process had no descriptor left to open the input: the client's failure, not the input's.
        var outOfDescriptors = false
    }
}
