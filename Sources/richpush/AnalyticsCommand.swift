import Foundation
import RichPush

/// `richpush analytics`: the App Group suite an extension writes, and the app's flush to `/users/track`.
enum AnalyticsCommand {
    static let help = """
        Emulate analytics saved by an extension in its App Group and sent by the app at its next launch.

        Usage: richpush analytics record --app-group DIR [--suite NAME] [--event NAME [--property K=V]...]
                                         [--attribute K=V]... [--email ADDRESS]
               richpush analytics show   --app-group DIR [--suite NAME] [--json]
               richpush analytics flush  --app-group DIR [--suite NAME] --endpoint URL
                                         (--external-id ID | --braze-id ID) [--api-key-file FILE] [options]

        The suite is <DIR>/Library/Preferences/<NAME>.plist, as on a device or simulator (copy the App Group
        container as it is); --suite defaults to the only *.plist there. Values keep their JSON types:
        true/false, numbers, [a,b] (an array of strings), anything else a string ("42" with the quotes stays
        a string).

        record  appends what an extension saves (pending_custom_events, pending_custom_attributes,
                pending_user_attributes) under an exclusive lock, replacing the plist atomically.
        show    lists what is pending and points out the known defects (an event under the attributes key,
                a non-string event_name, a user attribute that does not decode, an unknown key).
                Exit status 1 when it found a defect; 65 when the suite or outbox is not one (damaged).
        flush   sends every pending item to <URL>/users/track, with nothing lost and nothing sent twice by
                richpush itself; run 'richpush analytics flush --help' for its options.

        Example:
          richpush analytics record --app-group Samples/app-group --event opened --property source=push
          richpush analytics show --app-group Samples/app-group
        """

    /// Runs `analytics ACTION [options]`; `words` are the words after `analytics`.
    static func run(_ words: [String]) async throws -> ExitCode {
        guard let action = words.first, !action.hasPrefix("-") else {
            if words.contains("--help") || words.contains("-h") {
                printLine(help)
                return .success
            }
            throw UsageError("analytics needs an action: record, show or flush")
        }
        let rest = Array(words.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            printLine(action == "flush" ? AnalyticsFlushCommand.help : help)
            return .success
        }
        let arguments = Arguments(rest)
        switch action {
        case "record": return try record(arguments)
        case "show": return try show(arguments)
        case "flush": return try await AnalyticsFlushCommand.run(arguments)
        default: throw UsageError("unknown analytics action '\(action)': use record, show or flush")
        }
    }

    /// Reads `--app-group` and `--suite` into a suite.
    static func suite(_ arguments: inout Arguments, creating: Bool = false) throws -> AppGroupSuite {
        guard let container = try arguments.value("--app-group") else {
            throw UsageError("--app-group DIR is required (the App Group container, holding Library/Preferences)")
        }
        let name = try arguments.value("--suite")
        do {
            return try AppGroupSuite(container: container, suite: name, creating: creating)
        } catch {
            if error.code == .invalidInput { throw UsageError(error.message) }
            throw error
        }
    }

    /// Stops with a usage error when a word is left that no option took.
    static func requireNoArgument(_ arguments: Arguments) throws {
        let positionals = try arguments.positionals()
        guard positionals.isEmpty else { throw UsageError("unexpected argument '\(positionals[0])'") }
    }

    private static func record(_ arguments: Arguments) throws -> ExitCode {
        var arguments = arguments
        // One event per call: its --property values belong to it, and a second --event must not
        // silently replace the first.
        let events = try arguments.values("--event")
        guard events.count <= 1 else {
            throw UsageError(
                "record takes one --event per call (got \(events.count): \(events.joined(separator: ", "))): run "
                    + "'richpush analytics record' once per event, each with its own --property values")
        }
        let event = events.first
        let suite = try suite(&arguments, creating: true)
        let properties = try arguments.values("--property").map { text throws(SetupError) in
            try SuiteEntry.Field(keyValue: text)
        }
        let attributes = try arguments.values("--attribute").map { text throws(SetupError) in
            try SuiteEntry.Field(keyValue: text)
        }
        let emails = try arguments.values("--email")
        guard emails.count <= 1 else { throw UsageError("record takes one --email per call (got \(emails.count))") }
        let email = emails.first
        try requireNoArgument(arguments)
        let records = try PendingRecord.records(
            event: event, properties: properties, attributes: attributes, email: email)
        do {
            let counts = try SuiteRecorder.record(records, in: suite)
            printError(
                "richpush: recorded \(records.count) item(s) in \(suite.path): pending \(counts.events) event(s), "
                    + "\(counts.customAttributes) custom attribute(s), \(counts.userAttributes) user attribute(s)")
            return .success
        } catch {
            if error.code == .invalidInput { throw UsageError(error.message) }
            printError("richpush analytics record: \(error.message)")
            return AnalyticsExit.code(for: .failed(error.code))
        }
    }

    private static func show(_ arguments: Arguments) throws -> ExitCode {
        var arguments = arguments
        let json = arguments.flag("--json")
        let suite = try suite(&arguments)
        try requireNoArgument(arguments)
        let show: SuiteShow
        do { show = try SuiteShow(suite: suite) } catch {
            // A damaged suite or outbox (65) is not a suite with defects (1).
            printError("richpush analytics show: \(error.message)")
            return AnalyticsExit.code(for: .failed(error.code))
        }
        guard writeResult(json ? try JSON.string(show) : show.text, action: "show") else {
            return AnalyticsExit.code(for: .outputFailed)
        }
        return AnalyticsExit.code(for: show.defects.isEmpty ? .done : .defectsFound)
    }

    /// Writes a command's result and a newline to stdout; false (after saying so on stderr) when it
    /// cannot be written: a full disk, a closed pipe.
    static func writeResult(_ text: String, action: String) -> Bool {
        do throws(SystemError) {
            try SystemCall.writeAll(1, Array((text + "\n").utf8), path: "stdout")
            return true
        } catch {
            printError("richpush analytics \(action): cannot write the result: \(error.message)")
            return false
        }
    }
}

/// `richpush analytics flush`: the app's next launch, sending the suite to `/users/track`.
enum AnalyticsFlushCommand {
    static let help = """
        Send every pending item of an App Group suite to Braze's REST /users/track, as the app's next launch.

        Usage: richpush analytics flush --app-group DIR [--suite NAME] --endpoint URL
                                        (--external-id ID | --braze-id ID) [--api-key-file FILE] [options]

        Events become event objects (identifier, name, time in ISO 8601, properties); custom attributes and
        the email become attributes objects. At most 75 events and 75 attributes go in one request.

        The REST API key comes from --api-key-file FILE or the environment variable BRAZE_REST_API_KEY,
        never from the command line, and is never printed. Items are claimed from the suite into an outbox
        file beside it and leave the outbox only when their request got a 2xx answer: a flush that was
        stopped, even killed, resumes from the outbox on the next run. Only items whose request got no
        answer can reach the endpoint twice; the summary lists them (unacknowledged).

        Options:
          --endpoint URL          The REST endpoint (https; plain http only to 127.0.0.1); /users/track is appended.
          --external-id ID        Identify the user by external_id.
          --braze-id ID           Identify the user by braze_id.
          --api-key-file FILE     Read the REST API key from FILE.
          --cacert FILE           Trust this CA (PEM) besides the system's.
          --connect-to H:P:H2:P2  Connect to H2:P2 for requests to H:P, as curl does. Repeatable.
          --rate N                Requests started per second at most (default 1000: Braze's 3,000 per 3 s).
          --attempts N            Requests for one batch at most, retries included (default 6).
          --backoff MS            First retry delay after a 5xx or no answer; doubles each time, with jitter
                                  (default 500, capped at 30 s). A 429 waits for X-RateLimit-Reset or Retry-After.
          --timeout SECONDS       Time allowed for one request (default 30).
          --json                  Print the summary as JSON on stdout.
          --verbose               Print each request's outcome on stderr.

        Exit status: 0 when everything was delivered, 1 when anything is left pending or was rejected,
        65 when the suite or outbox is damaged, 69 when another flush of the same suite is running,
        74 when a file cannot be written (a full disk) or the summary cannot be written to stdout.

        Example:
          richpush analytics flush --app-group Samples/app-group --endpoint http://127.0.0.1:8080 \\
              --external-id user-1 --api-key-file key.txt
        """

    static func run(_ arguments: Arguments) async throws -> ExitCode {
        var arguments = arguments
        let options = try AnalyticsFlushOptions(parsing: &arguments)
        let verbose = options.verbose
        let session: FlushSession
        do throws(SetupError) { session = try FlushSession(options.configuration) } catch {
            if error.pointsToHelp { throw error }
            printError("richpush analytics flush: \(error.message)")
            return error.code
        }
        defer { session.close() }
        let run = await runInterruptibly {
            await session.flush(progress: { line in if verbose { printError("richpush: " + line) } })
        }
        let summary: FlushSummary
        switch run.value {
        case .success(let value): summary = value
        case .failure(let error):
            printError("richpush analytics flush: \(error.message)")
            return AnalyticsExit.code(for: .failed(error.code))
        }
        let shown = AnalyticsCommand.writeResult(
            options.json ? try JSON.string(summary) : summary.text, action: "flush")
        if let stop = summary.stopMessage { printError("richpush analytics flush: " + stop) }
        // Not shown: the next flush repeats the warning about unacknowledged items.
        guard shown else { return AnalyticsExit.code(for: .outputFailed) }
        session.markReported(summary)
        return AnalyticsExit.code(for: summary, interrupted: run.interrupted)
    }

    /// The key from `file` or BRAZE_REST_API_KEY; the message never contains the key.
    static func apiKey(file: String?) throws -> String {
        try FlushConfiguration.apiKey(file: file)
    }

    /// Refuses a key given on the command line (`--api-key VALUE`, `--api-key=VALUE`), without echoing it.
    static func refusingKeyOnCommandLine(_ arguments: Arguments) throws -> Arguments {
        var copy = arguments
        let given = (try? copy.values("--api-key", "--key", "--rest-api-key")) ?? []
        if !given.isEmpty || copy.flag("--api-key", "--key", "--rest-api-key") {
            throw UsageError(
                "the REST API key is never taken from the command line (it would show in ps and shell history): "
                    + "use --api-key-file FILE or BRAZE_REST_API_KEY")
        }
        return arguments
    }
}
