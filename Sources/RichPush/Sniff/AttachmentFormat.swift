/// The three kinds of attachment iOS accepts, each with its own size cap.
public enum AttachmentClass: String, Sendable, Codable, CaseIterable {
    case audio, image, movie

    /// Apple's documented cap in megabytes (docs/platform.md, section 2).
    public var maxMegabytes: Int {
        switch self {
        case .audio: return 5
        case .image: return 10
        case .movie: return 50
        }
    }

    /// The cap in bytes: decimal megabytes by default (Apple does not say which; decimal is stricter).
    public func maxBytes(binaryMegabytes: Bool = false) -> Int64 {
        Int64(maxMegabytes) * (binaryMegabytes ? 1 << 20 : 1_000_000)
    }
}

/// One format iOS can attach: the single table mapping MIME type, UTI, class and file extensions.
///
/// iOS picks the type from the file name extension; libmagic tells what the bytes are. This table
/// joins the two. It follows docs/platform.md, section 2: AIFF, WAV, MP3 and MPEG-4 audio; JPEG, GIF
/// and PNG; MPEG, MPEG-2, MPEG-4 and AVI. WebP and HEIC are deliberately absent: iOS does not list
/// them and they are reported not to show.
package struct AttachmentFormat: Sendable, Equatable, Hashable {
    /// A short name, for reports (`jpeg`, `mp3`, ...).
    package let name: String
    /// The Uniform Type Identifier iOS uses.
    package let uti: String
    /// Which class (and so which size cap) it belongs to.
    package let attachmentClass: AttachmentClass
    /// File extensions iOS maps to this UTI, lower case, the usual one first.
    package let extensions: [String]
    /// MIME types libmagic (5.44) or servers report for it.
    package let mimeTypes: [String]

    /// Every supported format.
    package static let all: [AttachmentFormat] = [
        AttachmentFormat(
            name: "jpeg", uti: "public.jpeg", attachmentClass: .image, extensions: ["jpg", "jpeg", "jpe"],
            mimeTypes: ["image/jpeg", "image/pjpeg"]),
        AttachmentFormat(
            name: "gif", uti: "com.compuserve.gif", attachmentClass: .image, extensions: ["gif"],
            mimeTypes: ["image/gif"]),
        AttachmentFormat(
            name: "png", uti: "public.png", attachmentClass: .image, extensions: ["png"], mimeTypes: ["image/png"]),
        AttachmentFormat(
            name: "aiff", uti: "public.aiff-audio", attachmentClass: .audio, extensions: ["aif", "aiff"],
            mimeTypes: ["audio/x-aiff", "audio/aiff"]),
        AttachmentFormat(
            name: "wav", uti: "com.microsoft.waveform-audio", attachmentClass: .audio, extensions: ["wav", "wave"],
            mimeTypes: ["audio/x-wav", "audio/wav", "audio/vnd.wave", "audio/wave"]),
        AttachmentFormat(
            name: "mp3", uti: "public.mp3", attachmentClass: .audio, extensions: ["mp3"],
            mimeTypes: ["audio/mpeg", "audio/mp3", "audio/x-mp3"]),
        AttachmentFormat(
            name: "m4a", uti: "public.mpeg-4-audio", attachmentClass: .audio, extensions: ["m4a"],
            mimeTypes: ["audio/x-m4a", "audio/mp4", "audio/m4a"]),
        AttachmentFormat(
            name: "mpeg", uti: "public.mpeg", attachmentClass: .movie, extensions: ["mpg", "mpeg", "mpe", "m1v"],
            mimeTypes: ["video/mpeg"]),
        AttachmentFormat(
            name: "mpeg2", uti: "public.mpeg-2-video", attachmentClass: .movie, extensions: ["m2v"],
            mimeTypes: ["video/mpeg2", "video/x-mpeg2"]),
        AttachmentFormat(
            name: "mp4", uti: "public.mpeg-4", attachmentClass: .movie, extensions: ["mp4", "mpg4"],
            mimeTypes: ["video/mp4"]),
        AttachmentFormat(
            name: "avi", uti: "public.avi", attachmentClass: .movie, extensions: ["avi", "vfw"],
            mimeTypes: ["video/x-msvideo", "video/avi", "video/msvideo"]),
    ]

    private static let byExtension: [String: AttachmentFormat] = Dictionary(
        all.flatMap { format in format.extensions.map { ($0, format) } }, uniquingKeysWith: { first, _ in first })
    private static let byMIME: [String: AttachmentFormat] = Dictionary(
        all.flatMap { format in format.mimeTypes.map { ($0, format) } }, uniquingKeysWith: { first, _ in first })

    /// The format iOS would assume for a file with this extension (case-insensitive, one leading dot ignored).
    package static func forExtension(_ fileExtension: String) -> AttachmentFormat? {
        byExtension[normalizedExtension(fileExtension)]
    }

    /// The format of bytes libmagic reported as `mime` (parameters such as `; charset=` ignored).
    package static func forMIME(_ mime: String) -> AttachmentFormat? {
        // libmagic's and nearly every server's spelling is a key as it is ("image/jpeg"): no copy, no trim.
        if let exact = byMIME[mime] { return exact }
        let bare = mime.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        return byMIME[bare.lowercased()]
    }

    /// Lower-cases a declared type and strips one leading dot, as the emulated extension does.
    package static func normalizedExtension(_ text: String) -> String {
        let lower = text.lowercased()
        return lower.hasPrefix(".") ? String(lower.dropFirst()) : lower
    }
}
