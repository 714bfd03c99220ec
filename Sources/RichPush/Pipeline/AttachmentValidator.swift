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
/// Size is checked during the download (the cap of the declared class, `file-too-large`, 102).
public enum AttachmentValidator {
    public enum Decision: Sendable, Equatable {
        case attach(warnings: [Warning])
        case reject(ReasonCode, String)
    }

    public static func validate(declared: AttachmentFormat, sniff: Sniff) -> Decision {
        guard let actual = sniff.format else {
            let what = sniff.mime == "application/x-empty" ? "empty" : "\(sniff.mime) (\(sniff.description))"
            return .reject(
                .contentUnrecognized,
                "the downloaded file is \(what), not a format iOS can attach (UNError 101). "
                    + "Serve a JPEG, PNG, GIF, MP3, M4A, WAV, AIFF, MP4, MPEG or AVI file.")
        }
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
                    + "Fix 'ab.att.type' or the URL.")
        }
        if declared.attachmentClass == .image {
            return .attach(warnings: [
                Warning(
                    "image-format-mismatch",
                    "the type says \(declared.name) but the bytes are \(actual.name); iOS decodes images by content, "
                        + "so it shows, but set 'ab.att.type' to '\(actual.extensions[0])'.")
            ])
        }
        return .reject(
            .contentFormatMismatch,
            "the type says \(declared.name) but the bytes are \(actual.name) (\(sniff.mime)); iOS opens "
                + "\(declared.attachmentClass.rawValue) by extension and would fail (UNError 101). "
                + "Set 'ab.att.type' to '\(actual.extensions[0])'.")
    }
}
