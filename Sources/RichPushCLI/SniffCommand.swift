import Foundation
import RichPush

/// `richpush sniff`: what files really are, and what iOS would make of them.
enum SniffCommand {
    static let command = Command(
        name: "sniff", synopsis: "sniff FILE...",
        summary: "Tell what files really are, and whether iOS would attach them.",
        about: """
            Tell what files really are (libmagic), and whether iOS would attach them.

            Usage: richpush sniff FILE... [--json]

            For each file: the MIME type, the supported format and class it maps to (or 'unsupported'),
            and libmagic's description (which carries image dimensions). A file that cannot be read is
            named on stderr; the others are still sniffed.
            """,
        options: [OptionGroup("Options", [Option("--json", nil, "One JSON object per file and line instead.")])],
        footer: """
            Example:
              richpush sniff Samples/assets/*
            """,
        exitNotes: [
            .success: "every file is a supported attachment format",
            .failure: "a file is not a supported attachment format",
            .dataError: "a file cannot be read (the others are still sniffed)",
        ],
        run: { try run($0) })

    static func run(_ arguments: Arguments) throws -> ExitCode {
        var arguments = arguments
        let json = arguments.flag("--json")
        let files = try arguments.positionals()
        guard !files.isEmpty else { throw UsageError("sniff needs at least one file") }
        let sniffer = TypeSniffer(pool: MagicPool(capacity: 1))
        var allSupported = true
        var unreadable = false
        for file in files {
            let sniff: Sniff
            do { sniff = try sniffer.sniff(fileAt: file) } catch {
                printError("richpush sniff: \(error.message.escapingControlCharacters)")
                unreadable = true
                continue
            }
            let format = sniff.format
            allSupported = allSupported && format != nil
            if json {
                printLine(
                    try JSON.string(
                        SniffLine(
                            file: file, mime: sniff.mime, format: format?.name, uti: format?.uti,
                            attachmentClass: format?.attachmentClass.rawValue, description: sniff.description,
                            notes: sniff.notes)))
            } else {
                let kind = format.map { "\($0.attachmentClass.rawValue)/\($0.name) \($0.uti)" } ?? "unsupported"
                printLine("\(file)\t\(sniff.mime)\t\(kind)\t\(sniff.description)")
            }
        }
        return unreadable ? .dataError : allSupported ? .success : .failure
    }

    private struct SniffLine: Codable {
        var file: String
        var mime: String
        var format: String?
        var uti: String?
        var attachmentClass: String?
        var description: String
        var notes: [String]
    }
}
