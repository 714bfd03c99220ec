import Foundation
import POSIXKit
import RichPush

/// `richpush compose`: the send request a team writes, turned into the APNs payload the platform delivers.
enum ComposeCommand {
    static let sdk: Key<String?> = .text(
        Option(
            "--sdk", "NAME",
            "Whose send request it is: braze (default; /messages/send, or its apple_push object), onesignal "
                + "(POST /notifications) or airship (the push API).", example: "onesignal"))
    static let envelope: Key<Bool> = .flag(
        Option(
            "--envelope", nil,
            "Write one NDJSON line per payload instead: {\"headers\", \"payload\", \"payload_bytes\", \"warnings\", "
                + "\"liquid\", \"inferred\"}, or {\"refusal\"} for a refused request (with \"user\", the user's line, for --user)."
        ))
    static let explain: Key<Bool> = .flag(
        Option(
            "--explain", nil,
            "List the mapping's rules, documented or inferred, instead of composing: all of them for --sdk, or those "
                + "FILE uses."))
    static let dashboard: Key<Bool> = .flag(
        Option(
            "--dashboard", nil,
            "The message comes from a dashboard campaign or Canvas step: Braze's 3,807-byte limit (a warning) instead "
                + "of the API's 1,912 bytes (a refusal), no audience check, and \"$json:{...}\" extras sent as JSON."))
    static let user: Key<String?> = .text(
        Option(
            "--user", "FILE",
            "Render the common Liquid tags for each user of FILE (one JSON object of attributes, or NDJSON): one "
                + "payload per user, each checked against the size limit.", example: "Samples/requests/users.ndjson"))

    static let command = Command(
        name: "compose", synopsis: "compose [FILE]",
        summary: "Turn a Braze send request (stdin or FILE) into the APNs payload Braze delivers; payload on stdout.",
        about: """
            Turn the send request a team writes into the APNs payload the phone receives.

            Usage: richpush compose [options] < request.json > payload.json
                   richpush compose [options] request.json

            Reads a Braze /messages/send body, {"apple_push": {...}}, or an apple_push object alone, and writes
            on stdout the payload Braze would deliver, byte for byte as it goes to APNs (compact JSON, one
            line). The APNs headers it implies (apns-push-type, apns-priority, apns-expiration,
            apns-collapse-id) and every warning go to stderr, or with --envelope into one NDJSON line with the
            payload. A request Braze would refuse gets Braze's HTTP status and error name on stderr, and
            exit 65. Where Braze does not document the mapping richpush infers it: --explain lists those
            rules. Liquid is reported; --user renders the common tags per user.
            """,
        options: [OptionGroup("Options", [sdk, envelope, explain, dashboard, user])],
        footer: """
            Examples:
              richpush compose Samples/requests/rich-image.json
              richpush compose --envelope --user Samples/requests/users.ndjson Samples/requests/liquid-welcome.json
              richpush compose --explain
              richpush compose --sdk onesignal Samples/requests/onesignal-attachments.json
              richpush process --braze-request Samples/requests/rich-image.json   # compose, then the extension
            """,
        exitNotes: [
            .dataError:
                "Braze would refuse the request (or a user's payload), or the request or --user file cannot be read"
        ],
        run: { try await run($0) })

    static func run(_ arguments: Arguments) async throws -> ExitCode {
        var arguments = arguments
        let options = ComposeOptions(dialect: try dialect(&arguments), dashboard: try arguments.read(Self.dashboard))
        let envelope = try arguments.read(Self.envelope)
        let explain = try arguments.read(Self.explain)
        let userFile = try arguments.read(Self.user)
        let positionals = try arguments.positionals()
        guard positionals.count <= 1 else { throw UsageError("compose takes one request file (or stdin)") }
        if explain && positionals.isEmpty {
            printLine(table(ComposeRule.all.filter { $0.dialect == options.dialect }))
            return .success
        }
        let source = positionals.first ?? "-"
        let bytes = try readOrFail(source, what: "request")
        var users: [JSONValue?] = [nil]
        if let userFile {
            switch Composer.users(try readOrFail(userFile, what: "--user file")) {
            case .success(let read): users = read
            case .failure(let refusal):
                throw CommandFailure(.dataError, "--user \(userFile.escapingControlCharacters): \(refusal.line)")
            }
        }
        let shown = source == "-" ? "stdin" : source.escapingControlCharacters
        let request: Composer.Request
        switch Composer.read(bytes, options: options) {
        case .success(let read): request = read
        case .failure(let refusal):
            if envelope { try emit(ComposedPush.envelope(refusal: refusal).utf8) }
            printError("richpush compose: \(shown): refused: \(refusal.line.escapingControlCharacters)")
            return .dataError
        }
        // Ctrl-C or SIGTERM stops the loop, and a rendering in progress, at once: the lines written stay.
        let (given, everyone) = (userFile != nil, users)
        let run = await runInterruptibly {
            composeEach(request, users: everyone, label: shown, numbered: given, envelope: envelope, explain: explain)
        }
        if run.interrupted {
            printError("richpush compose: interrupted after \(run.value.done) of \(users.count) payloads.")
            return .interrupted
        }
        let tally = try run.value.outcome.get()
        if explain { printLine(table(ComposeRule.all.filter { tally.used.contains($0.id) })) }
        return tally.refused ? .dataError : .success
    }

    /// The most distinct users' results kept for reuse.
    static let reusedResults = 4096

    /// What composing every user came to.
    struct Tally: Sendable {
        var refused = false
        var used: Set<String> = []
    }

    /// Composes `request` for each of `users` in turn, writing each payload (or refusal) as it comes;
    /// stops at the first write that fails, or when the task is cancelled.
    static func composeEach(
        _ request: Composer.Request, users: [JSONValue?], label shown: String, numbered: Bool, envelope: Bool,
        explain: Bool
    ) -> (outcome: Result<Tally, CommandFailure>, done: Int) {
        var tally = Tally()
        // Users whose attributes the Liquid reads are the same get the same result: composed once
        // (a template of 40,000 tags rendered for each of 20,000 users took 4.5 minutes).
        var composedFor: [[UInt8]: Result<ComposedPush, ComposeRefusal>] = [:]
        for (index, user) in users.enumerated() {
            let number = numbered ? index + 1 : nil
            let label = number.map { "\(shown) (user \($0))" } ?? shown
            let key = request.renderingKey(for: user)
            guard
                let composed = key.flatMap({ composedFor[$0] }) ?? Composer.composeUnlessCancelled(request, user: user)
            else {
                return (.success(tally), index)
            }
            if let key, composedFor[key] == nil, composedFor.count < Self.reusedResults { composedFor[key] = composed }
            do throws(CommandFailure) {
                switch composed {
                case .success(let push):
                    tally.used.formUnion(push.rules)
                    if explain { continue }
                    try emit(envelope ? push.envelope(user: number).utf8 : push.bytes)
                    if !envelope {
                        let headers = push.headers.fields.map { "\($0.name): \($0.value)" }.joined(separator: ", ")
                        printError(
                            "richpush compose: \(label): \(push.bytes.count) bytes; \(headers)"
                                .escapingControlCharacters)
                    }
                    for warning in push.warnings {
                        printError(
                            "richpush compose: \(label): warning [\(warning.code)]: \(warning.message)"
                                .escapingControlCharacters)
                    }
                case .failure(let refusal):
                    tally.refused = true
                    if envelope && !explain { try emit(ComposedPush.envelope(refusal: refusal, user: number).utf8) }
                    printError("richpush compose: \(label): refused: \(refusal.line)".escapingControlCharacters)
                }
            } catch {
                return (.failure(error), index)
            }
        }
        return (.success(tally), users.count)
    }

    /// `--sdk NAME`, braze by default.
    static func dialect(_ arguments: inout Arguments) throws(UsageError) -> ComposeDialect {
        guard let name = try arguments.read(Self.sdk) else { return .braze }
        guard let dialect = ComposeDialect(rawValue: name.lowercased()) else {
            let names = ComposeDialect.allCases.map(\.rawValue)
            let guess = Suggestion.closest(to: name, in: names).map { "; did you mean '\($0)'?" } ?? ""
            throw UsageError(
                "compose --sdk takes \(names.joined(separator: ", ")), not '\(name.escapingControlCharacters)'\(guess)")
        }
        return dialect
    }

    /// The rules as `--explain` prints them: one line each, inferred ones marked.
    static func table(_ rules: [ComposeRule]) -> String {
        let width = rules.map(\.id.count).max() ?? 0
        return rules.map { rule in
            rule.id.padding(toLength: width + 2, withPad: " ", startingAt: 0)
                + rule.status.padding(toLength: 12, withPad: " ", startingAt: 0) + "\(rule.from) -> \(rule.to). "
                + rule.note
        }.joined(separator: "\n")
    }

    /// A file's bytes (or stdin's for "-"), or exit 65 naming it.
    static func readOrFail(_ source: String, what: String) throws -> [UInt8] {
        switch ProcessCommand.readInput(source) {
        case .success(let bytes):
            guard bytes.count <= ProcessCommand.readLimit else {
                throw CommandFailure(
                    .dataError,
                    "the \(what) is over \(ProcessCommand.readLimit) bytes; no send request is that large.")
            }
            return bytes
        case .failure(let failure): throw CommandFailure(.dataError, "the \(what): \(failure.message)")
        }
    }

    /// One line on stdout.
    static func emit(_ bytes: [UInt8]) throws(CommandFailure) {
        do { try SystemCall.writeAll(1, bytes + [UInt8(ascii: "\n")], path: "stdout") } catch {
            throw CommandFailure(.ioError, error.message)
        }
    }
}
