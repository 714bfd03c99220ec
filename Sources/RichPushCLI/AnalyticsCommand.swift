import Foundation
import POSIXKit
import RichPush
import RichPushServices

/// `richpush analytics`: the App Group suite an extension writes, and the app's flush to `/users/track`.
enum AnalyticsCommand {
    static let appGroup: Key<String?> = .text(
        Option(
            .appGroup, "DIR", "The App Group container, holding Library/Preferences (required).",
            example: "Samples/app-group"))
    static let suiteName: Key<String?> = .text(
        Option(
            .suite, "NAME", "The App Group's UserDefaults suite (default: the only *.plist there).",
            example: "group.com.example"))

    // The options of this command, each declared once and read through its key.
    static let event: Key<[String]> = .list(Option(.event, "NAME", "A custom event (one per call).", example: "opened"))
    static let property: Key<[String]> = .list(
        Option(.property, "K=V", "A property of the event (repeatable).", example: "source=push"))
    static let attribute: Key<[String]> = .list(
        Option(.attribute, "K=V", "A custom attribute (repeatable).", example: "plan=pro"))
    static let email: Key<[String]> = .list(
        Option(.email, "ADDRESS", "The user's email (one per call).", example: "a@example.com"))
    static let json: Key<Bool> = .flag(Option(.json, nil, "Print the listing as JSON on stdout."))

    static let command = Command(
        name: "analytics", synopsis: "analytics",
        summary: "Record, show and flush the analytics an extension saves in its App Group.",
        about: """
            Emulate analytics saved by an extension in its App Group and sent by the app at its next launch.

            Usage: richpush analytics record|show|flush --app-group DIR [--suite NAME] [options]

            The suite is <DIR>/Library/Preferences/<NAME>.plist, as on a device or simulator (copy the App Group
            container as it is); --suite defaults to the only *.plist there. Values keep their JSON types:
            true/false, numbers, [a,b] (an array of strings), anything else a string ("42" with the quotes stays
            a string).
            """,
        footer: """
            Example:
              richpush analytics record --app-group Samples/app-group --event opened --property source=push
              richpush analytics show --app-group Samples/app-group
            """,
        subcommands: [record, show, AnalyticsFlushCommand.command])

    static let record = Command(
        name: "record", synopsis: "record", summary: "Append what an extension saves, as the extension does.",
        about: """
            Append what an extension saves (pending_custom_events, pending_custom_attributes,
            pending_user_attributes) to its App Group suite, under an exclusive lock, replacing the plist atomically.

            Usage: richpush analytics record --app-group DIR [--suite NAME] [--event NAME [--property K=V]...]
                                             [--attribute K=V]... [--email ADDRESS]
            """,
        options: [
            OptionGroup(
                "Options",
                [
                    appGroup, suiteName,
                    event,
                    property,
                    attribute,
                    email,
                ])
        ],
        exitNotes: [.dataError: "the suite is not one (damaged, too large)", .ioError: "the suite cannot be written"],
        run: { try record($0) })

    static let show = Command(
        name: "show", synopsis: "show", summary: "List what is pending, with the known defects.",
        about: """
            List what is pending in an App Group suite and point out the known defects (an event under the
            attributes key, a non-string event_name, a user attribute that does not decode, an unknown key).

            Usage: richpush analytics show --app-group DIR [--suite NAME] [--json]
            """,
        options: [
            OptionGroup(
                "Options", [appGroup, suiteName, json])
        ],
        exitNotes: [
            .failure: "show found a defect", .dataError: "the suite or outbox is not one (damaged, too large)",
        ],
        run: { try show($0) })

    /// Reads `--app-group` and `--suite` into a suite.
    static func suite(_ arguments: inout Arguments, creating: Bool = false) throws -> AppGroupSuite {
        guard let container = try arguments.read(Self.appGroup) else {
            throw UsageError("--app-group DIR is required (the App Group container, holding Library/Preferences)")
        }
        let name = try arguments.read(Self.suiteName)
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

    static func record(_ arguments: Arguments) throws -> ExitCode {
        var arguments = arguments
        // One event per call: its --property values belong to it, and a second --event must not
        // silently replace the first.
        let events = try arguments.read(Self.event)
        guard events.count <= 1 else {
            throw UsageError(
                "record takes one --event per call (got \(events.count): \(events.joined(separator: ", "))): run "
                    + "'richpush analytics record' once per event, each with its own --property values")
        }
        let event = events.first
        let suite = try suite(&arguments, creating: true)
        let properties = try arguments.read(Self.property).map { text throws(ConfigurationError) in
            try SuiteEntry.Field(keyValue: text)
        }
        let attributes = try arguments.read(Self.attribute).map { text throws(ConfigurationError) in
            try SuiteEntry.Field(keyValue: text)
        }
        let emails = try arguments.read(Self.email)
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

    static func show(_ arguments: Arguments) throws -> ExitCode {
        var arguments = arguments
        let json = try arguments.read(Self.json)
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
    // The options of this command, each declared once and read through its key.
    /// The library's pacing and retries, whose defaults the help quotes.
    private static let defaults = FlushOptions(user: .externalID(""))
    static let endpoint: Key<String?> = .text(
        Option(
            .endpoint, "URL",
            "The REST endpoint (https; plain http only to 127.0.0.1); /users/track is appended (required).",
            example: "http://127.0.0.1:9"))
    static let externalID: Key<String?> = .text(
        Option(.externalID, "ID", "Identify the user by external_id.", example: "user-1"))
    static let brazeID: Key<String?> = .text(Option(.brazeID, "ID", "Identify the user by braze_id.", example: "b-1"))
    static let rate: Key<Double?> = .number(
        Option(
            .rate, "N",
            "Requests started per second at most (default \(Int(defaults.requestsPerSecond)): Braze's 3,000 per 3 s).",
            example: "10"), in: 0.01...1_000_000)
    static let attempts: Key<Int?> = .number(
        Option(
            "--attempts", "N", "Requests for one batch at most, retries included (default \(defaults.maxAttempts)).",
            example: "2"), in: 1...100)
    static let backoff: Key<Double?> = .duration(
        Option(
            "--backoff", "MS",
            "First retry delay after a 5xx or no answer; doubles each time, with jitter (default \(Keys.shown(defaults.backoffBase, in: .milliseconds)), "
                + "capped at \(Keys.shown(defaults.backoffCap, in: .seconds)) s). A 429 waits for X-RateLimit-Reset or Retry-After.",
            example: "100"), in: 0...600_000, unit: .milliseconds)
    static let timeout: Key<Double?> = .duration(
        Option(
            "--timeout", "SECONDS",
            "Time allowed for one request (default \(Keys.shown(FlushConfiguration.defaultRequestTimeout, in: .seconds))).",
            example: "5"), in: 0.01...3600, unit: .seconds)
    static let json: Key<Bool> = .flag(Option(.json, nil, "Print the summary as JSON on stdout."))
    static let verbose: Key<Bool> = .flag(
        Option("--verbose", nil, "Print each request's outcome on stderr.", aliases: ["-v"]))

    static let command = Command(
        name: "flush", synopsis: "flush", summary: "Send every pending item to /users/track, as the app's next launch.",
        about: """
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
            """,
        options: [
            OptionGroup(
                "Options",
                [
                    AnalyticsCommand.appGroup, AnalyticsCommand.suiteName,
                    endpoint,
                    externalID,
                    brazeID,
                    Keys.apiKeyFile, Keys.caFile, Keys.connectTo,
                    rate,
                    attempts,
                    backoff,
                    timeout,
                    json,
                    verbose,
                ])
        ],
        footer: """
            Example:
              richpush analytics flush --app-group Samples/app-group --endpoint http://127.0.0.1:8080 \\
                  --external-id user-1 --api-key-file key.txt
            """,
        exitNotes: [
            .failure: "anything is left pending or was rejected",
            .dataError: "the suite or outbox is damaged, or a --cacert that is missing",
            .unavailable: "another flush of the same suite is running",
            .ioError: "a file cannot be written (a full disk), or the summary cannot be written to stdout",
        ],
        run: { try await run($0) })

    static func run(_ arguments: Arguments) async throws -> ExitCode {
        var arguments = arguments
        let options = try AnalyticsFlushOptions(parsing: &arguments)
        let verbose = options.verbose
        // The client lives for this block only: stopped however it ends.
        return try await FlushSession.with(options.configuration) { session in
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
    }
}
