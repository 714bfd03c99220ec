import Foundation
import RichPush

/// `richpush sdk list`: the SDK dialects `--sdk` emulates, with their keys and rules.
enum SDKCommand {
    // The options of this command, each declared once and read through its key.
    static let json: Key<Bool> = .flag(Option(.json, nil, "One JSON object per SDK and line instead."))

    static let command = Command(
        name: "sdk", synopsis: "sdk list", summary: "Show the SDK dialects --sdk emulates.",
        about: """
            Show the push SDKs whose service extensions --sdk emulates.

            Usage: richpush sdk list [--json]
            """,
        subcommands: [list])

    static let list = Command(
        name: "list", synopsis: "list", summary: "Each SDK's keys, naming rule, limits and delivery rules.",
        about: """
            Show each SDK dialect: the keys its extension reads, how it names the file, its allow-list,
            how many attachments it takes, what the user sees on failure and on expiry, its network
            calls, and which of its rules are inferred rather than read in its source.

            Usage: richpush sdk list [--json]

            --sdk auto tries the dialects in this order and takes the first whose keys the payload
            carries (Braze when none): \(DialectDetection.order.map(\.name).joined(separator: ", ")).
            """,
        options: [OptionGroup("Options", [json])],
        run: { try run($0) })

    /// One dialect as `--json` prints it.
    struct Row: Encodable {
        var name: String
        var title: String
        var keys: [String]
        var gate: [String]
        var markers: [String]
        var naming: String
        var allowList: [String]?
        var caseSensitive: Bool
        var maxContentLength: Int64?
        var resourceTimeoutSeconds: Double?
        var attachments: String
        var onFailure: String
        var onExpiry: String
        var changes: [String]
        var networkCalls: [String]
        var inferred: [String]
        var source: String

        init(_ dialect: Dialect) {
            name = dialect.name
            title = dialect.title
            keys = dialect.media.keys
            gate = dialect.gate
            markers = dialect.markers
            naming = dialect.naming.summary
            allowList = dialect.allowList
            caseSensitive = dialect.allowListIsCaseSensitive
            maxContentLength = dialect.maxContentLength
            resourceTimeoutSeconds = dialect.resourceTimeout?.inSeconds
            attachments = dialect.attachments.rawValue
            onFailure = dialect.onFailure.rawValue
            onExpiry = dialect.onExpiry.rawValue
            changes = dialect.bestAttemptChanges.map(\.what)
            networkCalls = dialect.networkCalls.map(SDKCommand.describe)
            inferred = dialect.inferred
            source = dialect.source
        }
    }

    static func describe(_ call: SDKCall) -> String {
        var text = "\(call.name): \(call.method) \(call.path)"
        switch call.start {
        case .afterDisplay: text += ", after display"
        case .withDownload(let delay) where delay > .zero:
            text += ", \(String(format: "%g", delay.inSeconds)) s after arrival, beside the download"
        case .withDownload: text += ", beside the download"
        }
        if call.jitterSeconds > 0 { text += ", 0-\(String(format: "%g", call.jitterSeconds)) s jitter" }
        if let timeout = call.timeout { text += ", \(String(format: "%g", timeout.inSeconds)) s timeout" }
        if call.blocksDisplay { text += ", display waits for it" }
        if call.optIn { text += ", only with --sdk-receipts" }
        if call.request == nil { text += ", listed, not sent" }
        return text + " (when \(call.condition))"
    }

    static func run(_ arguments: Arguments) throws -> ExitCode {
        var arguments = arguments
        let json = try arguments.read(Self.json)
        if let extra = try arguments.positionals().first {
            throw UsageError("sdk list takes no argument '\(extra.escapingControlCharacters)'")
        }
        if json {
            for dialect in Dialect.all { printLine(try JSON.string(Row(dialect))) }
            return .success
        }
        var blocks: [String] = []
        for dialect in Dialect.all {
            let row = Row(dialect)
            var lines = ["\(row.name) (\(row.title))"]
            lines.append("  keys:        " + row.keys.joined(separator: ", "))
            if !row.gate.isEmpty { lines.append("  needs:       " + row.gate.joined(separator: ", ")) }
            lines.append("  naming:      " + row.naming)
            if let list = row.allowList {
                lines.append(
                    "  allow-list:  " + list.joined(separator: " ") + (row.caseSensitive ? " (case-sensitive)" : ""))
            }
            if let limit = row.maxContentLength { lines.append("  size check:  Content-Length <= \(limit) bytes") }
            if let timeout = row.resourceTimeoutSeconds {
                lines.append("  timeout:     \(String(format: "%g", timeout)) s for the whole download")
            }
            lines.append("  attachments: " + row.attachments)
            lines.append("  on failure:  \(row.onFailure); on expiry: \(row.onExpiry)")
            if !row.changes.isEmpty { lines.append("  changes:     " + row.changes.joined(separator: "; ")) }
            for call in row.networkCalls { lines.append("  calls:       " + call) }
            for rule in row.inferred { lines.append("  inferred:    " + rule) }
            lines.append("  source:      " + row.source)
            blocks.append(lines.joined(separator: "\n"))
        }
        printLine(
            blocks.joined(separator: "\n\n") + "\n\n--sdk auto order: "
                + DialectDetection.order.map(\.name).joined(separator: ", ") + " (Braze when no key matches).")
        return .success
    }
}
