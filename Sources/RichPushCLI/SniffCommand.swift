import Foundation
import MagicKit
import RichPush

/// `richpush sniff`: what files really are, and what iOS would make of them.
enum SniffCommand {
    // The options of this command, each declared once and read through its key.
    static let json: Key<Bool> = .flag(Option(.json, nil, "One JSON object per file and line instead."))

    static let command = Command(
        name: "sniff", synopsis: "sniff FILE...",
        summary: "Tell what files really are, and whether iOS would attach them.",
        about: """
            Tell what files really are (libmagic), and whether iOS would attach them.

            Usage: richpush sniff FILE... [--json] [--binary-mb]

            For each file: the MIME type, the supported format and class it maps to (or 'unsupported'),
            whether iOS would attach it ('attachable', or the reason code `process` gives), and
            libmagic's description (which carries image dimensions). The answer is `process`'s for the
            same bytes sent with their own type: the same content rules, and the size cap of the class
            the bytes belong to (audio 5 MB, image 10 MB, movie 50 MB). An MPEG-4 file without a video
            track is audio (m4a). Why a file would not attach is said on stderr. A file that cannot be
            read is named on stderr; the others are still sniffed.
            """,
        options: [
            OptionGroup(
                "Options", [json, Keys.binaryMegabytes])
        ],
        footer: """
            Example:
              richpush sniff Samples/assets/*
            """,
        exitNotes: [
            .success: "iOS would attach every file",
            .failure: "a file would not attach: not a supported format, or over its class's size cap",
            .dataError: "a file cannot be read (the others are still sniffed)",
        ],
        run: { try run($0) })

    static func run(_ arguments: Arguments) throws -> ExitCode {
        var arguments = arguments
        let json = try arguments.read(Self.json)
        var policy = ExtensionPolicy()
        policy.binaryMegabytes = try arguments.read(Keys.binaryMegabytes)
        let files = try arguments.positionals()
        guard !files.isEmpty else { throw UsageError("sniff needs at least one file") }
        let sniffer = TypeSniffer(pool: MagicPool(capacity: 1))
        var allAttachable = true
        var unreadable = false
        for file in files {
            let sniff: Sniff
            let bytes: Int64
            do { (sniff, bytes) = try sniffer.sniffFile(at: file) } catch {
                printError("richpush sniff: \(error.message.escapingControlCharacters)")
                unreadable = true
                continue
            }
            let format = sniff.attachableFormat
            // The validator `process` uses, so the two commands cannot disagree on the same bytes.
            let decision = AttachmentValidator.validate(file: sniff, bytes: bytes, policy: policy)
            var reason: ReasonCode?
            if case .reject(let code, let message) = decision {
                reason = code
                allAttachable = false
                printError("richpush sniff: \(file.escapingControlCharacters): \(message)")
            }
            if json {
                printLine(
                    try JSON.string(
                        SniffLine(
                            file: file, mime: sniff.mime, format: format?.name, uti: format?.uti,
                            attachmentClass: format?.attachmentClass.rawValue, bytes: bytes, attachable: reason == nil,
                            reason: reason?.rawValue, description: sniff.description, notes: sniff.notes)))
            } else {
                let kind = format.map { "\($0.attachmentClass.rawValue)/\($0.name) \($0.uti)" } ?? "unsupported"
                printLine("\(file)\t\(sniff.mime)\t\(kind)\t\(reason?.rawValue ?? "attachable")\t\(sniff.description)")
            }
        }
        return unreadable ? .dataError : allAttachable ? .success : .failure
    }

    private struct SniffLine: Codable {
        var file: String
        var mime: String
        var format: String?
        var uti: String?
        var attachmentClass: String?
        var bytes: Int64
        var attachable: Bool
        var reason: String?
        var description: String
        var notes: [String]
    }
}
