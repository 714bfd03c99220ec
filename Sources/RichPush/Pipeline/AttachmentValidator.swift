/// Stage 6: does what the bytes are fit what iOS will open them as?
///
/// iOS takes the type from the file extension, so the declared type decides what iOS will try to
/// open, and the bytes decide whether it can:
///
/// | declared vs. sniffed | result |
/// |---|---|
/// | same format | attach |
/// | both images, different formats (PNG bytes behind `jpg`) | attach, warning `image-format-mismatch`: ImageIO reads image files by their content, so the picture still shows |
/// | `m4a` declared, MPEG-4 bytes with no video track (brand `mp42`) | attach: an M4A file is an MPEG-4 file |
/// | `mpeg`/`m2v` declared, MPEG video bytes | attach: libmagic reports MPEG-1 and MPEG-2 alike |
/// | same class, other format (MP3 bytes behind `wav`) | fallback `content-format-mismatch` (101): AVFoundation opens audio and movies by extension |
/// | another class (audio behind `jpg`) | fallback `content-class-mismatch` (101) |
/// | not a supported format (WebP, HEIC, gzip, HTML, empty, unknown) | fallback `content-unrecognized` (101) |
///
/// Size is checked during the download (the cap of the declared class, `file-too-large`, 102), and for a
/// file on disk by ``validate(file:bytes:policy:)``, which `sniff` uses: one rule for both commands.
package enum AttachmentValidator {
    package enum Decision: Sendable, Equatable {
        case attach(warnings: [Warning])
        case reject(ReasonCode, String)
    }

    /// Why a file of `attachmentClass` over `cap` bytes is refused (`file-too-large`), in one sentence
    /// without its final period, so each command can add what it did about it.
    package static func tooLargeMessage(_ attachmentClass: AttachmentClass, cap: Int64) -> String {
        "the asset is over Apple's \(attachmentClass.maxMegabytes) MB cap for \(attachmentClass.rawValue) "
            + "(\(cap) bytes) (UNError 102)"
    }

    /// Whether iOS would attach a file of `bytes` bytes that sniffs as `sniff`, sent with its own type
    /// (``Sniff/attachableFormat``: an MPEG-4 file without a video track is audio): the same content
    /// rules as a download, and the cap of the class the bytes belong to.
    ///
    /// ```swift
    /// let (sniff, bytes) = try sniffer.sniffFile(at: "hero.jpg")
    /// let decision = AttachmentValidator.validate(file: sniff, bytes: bytes, policy: ExtensionPolicy())
    /// ```
    package static func validate(file sniff: Sniff, bytes: Int64, policy: ExtensionPolicy) -> Decision {
        guard let format = sniff.attachableFormat else { return unrecognized(sniff) }
        let cap = policy.maxBytes(for: format.attachmentClass)
        guard bytes <= cap else {
            return .reject(
                .fileTooLarge, tooLargeMessage(format.attachmentClass, cap: cap) + ": the file is \(bytes) bytes.")
        }
        return validate(declared: format, sniff: sniff)
    }

    /// `text` with a capital first letter and a final period.
    static func sentence(_ text: String) -> String { text.prefix(1).uppercased() + text.dropFirst() + "." }

    private static func unrecognized(_ sniff: Sniff) -> Decision {
        let what = sniff.mime == "application/x-empty" ? "empty" : "\(sniff.mime) (\(sniff.description))"
        return .reject(
            .contentUnrecognized,
            "the file is \(what), not a format iOS can attach (UNError 101). "
                + "Serve a JPEG, PNG, GIF, MP3, M4A, WAV, AIFF, MP4, MPEG or AVI file.")
    }

    /// What names the type iOS reads, for the advice in a message: a payload key (`'ab.att.type'`), or
    /// the file's name the SDK made from the response.
    package enum TypeSource: Sendable, Equatable {
        case key(String)
        case fileName

        func fix(_ suffix: String) -> String {
            switch self {
            case .key(let key): return "set '\(key)' to '\(suffix)'"
            case .fileName: return "name the file '.\(suffix)'"
            }
        }

        var fixEither: String {
            switch self {
            case .key(let key): return "Fix '\(key)' or the URL."
            case .fileName: return "Fix the URL or what the server sends."
            }
        }
    }

    package static func validate(declared: AttachmentFormat, sniff: Sniff, typeSource: TypeSource = .key("ab.att.type"))
        -> Decision
    {
        guard let actual = sniff.format else { return unrecognized(sniff) }
        if actual == declared { return .attach(warnings: []) }
        if declared.name == "m4a" && actual.name == "mp4" && sniff.hasVideoTrack == false {
            return .attach(warnings: [])
        }
        if ["mpeg", "mpeg2"].contains(declared.name) && ["mpeg", "mpeg2"].contains(actual.name) {
            return .attach(warnings: [])
        }
        guard actual.attachmentClass == declared.attachmentClass else {
            return .reject(
                .contentClassMismatch,
                "the type says \(declared.attachmentClass.rawValue) (\(declared.extensions[0])) but the bytes are "
                    + "\(actual.attachmentClass.rawValue) (\(sniff.mime)); iOS cannot open them (UNError 101). "
                    + typeSource.fixEither)
        }
        if declared.attachmentClass == .image {
            return .attach(warnings: [
                Warning(
                    "image-format-mismatch",
                    "the type says \(declared.name) but the bytes are \(actual.name); iOS decodes images by content, "
                        + "so it shows, but \(typeSource.fix(actual.extensions[0])).")
            ])
        }
        return .reject(
            .contentFormatMismatch,
            "the type says \(declared.name) but the bytes are \(actual.name) (\(sniff.mime)); iOS opens "
                + "\(declared.attachmentClass.rawValue) by extension and would fail (UNError 101). "
                + Self.sentence(typeSource.fix(actual.extensions[0])))
    }
}
