import CurlKit
import Foundation
@_exported import MagicKit

/// What the bytes of a downloaded file really are.
public struct Sniff: Sendable, Equatable, Codable {
    /// libmagic's MIME type, for example `image/png`.
    public var mime: String
    /// libmagic's description, which carries image dimensions ("PNG image data, 1200 x 600, ...").
    public var description: String
    /// The supported format the bytes are, if any.
    public var formatName: String?
    /// For MPEG-4 files: whether a track has a video handler (nil for other formats or when unknown).
    ///
    /// An audio-only MPEG-4 file sniffs as `video/mp4` when its brand is `mp42`; iOS plays it as
    /// `m4a` all the same, so the validator accepts it for a declared `m4a` when this is false.
    public var hasVideoTrack: Bool?
    /// Notes on how the answer was reached (an ID3 tag skipped, an MPEG-4 audio file).
    public var notes: [String]

    public init(mime: String, description: String, formatName: String?, hasVideoTrack: Bool?, notes: [String]) {
        self.mime = mime
        self.description = description
        self.formatName = formatName
        self.hasVideoTrack = hasVideoTrack
        self.notes = notes
    }

    enum CodingKeys: String, CodingKey {
        case mime, description
        case formatName = "format"
        case hasVideoTrack = "has_video_track"
        case notes
    }

    /// The `sniff` object of the outcome's JSON; absent optionals are left out.
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            (CodingKeys.mime.rawValue, .string(mime)), (CodingKeys.description.rawValue, .string(description)),
        ]
        if let formatName { members.append((CodingKeys.formatName.rawValue, .string(formatName))) }
        if let hasVideoTrack { members.append((CodingKeys.hasVideoTrack.rawValue, .bool(hasVideoTrack))) }
        members.append((CodingKeys.notes.rawValue, .array(notes.map { .string($0) })))
        return .object(members)
    }

    /// The supported format, looked up again from ``formatName``.
    public var format: AttachmentFormat? {
        formatName.flatMap { name in AttachmentFormat.all.first { $0.name == name } }
    }
}

/// Tells what downloaded bytes are, over a pool of libmagic cookies.
///
/// Reads at most ``sniffLimit`` bytes from the start of the file. Two cases libmagic alone gets
/// wrong are handled (docs/platform.md, section 6):
/// - an MP3 behind a large ID3v2 tag sniffs as `application/octet-stream` when the audio frames
///   are not in the buffer: the tag is skipped and the bytes after it are sniffed;
/// - an audio-only MPEG-4 file with brand `mp42` sniffs as `video/mp4`: ``Sniff/notes`` says
///   whether the file has a video track, so the validator can accept it for `m4a`.
public struct TypeSniffer: Sendable {
    /// Bytes read from the start of a file (enough for large ID3 tags and `moov` boxes at the front).
    public static let sniffLimit = 1 << 20
    /// Bytes libmagic is shown: media signatures sit at the start, and libmagic's cost grows with the
    /// buffer. An MP3 whose ID3 tag is longer is sniffed again after the tag. Every supported format
    /// is named from its first bytes (``quickWindow``); the rest serves only to describe bytes that
    /// are not one. A download keeps this much in memory while it runs, so it stays small: 16 KiB for
    /// each of 2,000 devices in flight is 32 MB (64 KiB was 128 MB).
    public static let magicWindow = 16 * 1024

    /// When the human description (a second libmagic query, as costly as the first) is worked out.
    public enum Description: Sendable {
        /// Always: reports show dimensions and codecs.
        case always
        /// Only for bytes that are not a supported format, where the message needs it (batch, bench).
        case unsupportedOnly
    }

    private let pool: MagicPool
    private let description: Description

    public init(pool: MagicPool = MagicPool(), description: Description = .always) {
        self.pool = pool
        self.description = description
    }

    /// Sniffs the file at `path` (a symbolic link is followed); anything but a regular file (a FIFO,
    /// whose open would wait for a writer, or a device such as `/dev/zero`, which never ends and has no
    /// size) is refused without reading it, as `process` refuses it.
    public func sniff(fileAt path: String) throws(SniffError) -> Sniff {
        let descriptor: Int32
        do { descriptor = try SystemCall.openRegularFile(path) } catch {
            throw SniffError(error)
        }
        defer { close(descriptor) }
        return try sniff(descriptor: descriptor)
    }

    /// Sniffs the file open at `descriptor` (read from offset 0; the offset is not moved).
    public func sniff(descriptor: Int32) throws(SniffError) -> Sniff {
        var info = stat()
        do { try SystemCall.retrying("read the file to sniff it") { fstat(descriptor, &info) } } catch {
            throw SniffError(error)
        }
        let size = max(0, Int(info.st_size))
        // The start of the file is enough for most formats; MPEG-4 (to look for a video track) and an
        // MP3 behind a long ID3 tag get up to `sniffLimit` bytes.
        let head = try Self.read(descriptor, count: min(size, Self.magicWindow))
        let first = try sniff(bytes: head)
        let wantsMore =
            first.formatName == "mp4" || first.formatName == "m4a"
            || (first.formatName == nil && Self.id3TagEnd(head) != nil)
        guard wantsMore && size > head.count else { return first }
        return try sniff(bytes: try Self.read(descriptor, count: min(size, Self.sniffLimit)))
    }

    private static func read(_ descriptor: Int32, count wanted: Int) throws(SniffError) -> [UInt8] {
        do {
            return try SystemCall.preadAll(descriptor, count: wanted, offset: 0)
        } catch {
            throw SniffError(SystemError(code: error.code, operation: "read the file to sniff it"))
        }
    }

    /// Sniffs bytes held in memory.
    /// Tells what a download is from what its transfer kept as the bytes went by: the first
    /// ``magicWindow`` bytes, the bytes after a leading ID3v2 tag, and whether an MPEG-4 video handler
    /// appeared within ``sniffLimit`` bytes. The same answer as sniffing the file, without reading it.
    public func sniff(body: BodySummary) throws(SniffError) -> Sniff {
        var result = try sniff(bytes: body.head, lookingForVideo: false)
        if result.formatName == nil, let afterTag = body.afterTag, !afterTag.isEmpty, let tagEnd = body.tagEnd,
            let inner = try? identify(afterTag[...], describing: true),
            AttachmentFormat.forMIME(inner.mime)?.name == "mp3"
        {
            result = Sniff(
                mime: inner.mime, description: "Audio file with ID3 version 2 tag, " + inner.description,
                formatName: "mp3", hasVideoTrack: nil,
                notes: ["an ID3v2 tag of \(tagEnd) bytes precedes the MPEG audio frames"])
        }
        if result.formatName == "mp4" || result.formatName == "m4a", let box = MPEG4Box.brands(of: body.head) {
            result.hasVideoTrack = body.videoHandler
            result.notes.append(
                "MPEG-4 major brand '\(box.major)'"
                    + (body.videoHandler ? ", has a video track" : ", no video track: MPEG-4 audio"))
        }
        return result
    }

    public func sniff(bytes: [UInt8]) throws(SniffError) -> Sniff {
        try sniff(bytes: bytes, lookingForVideo: true)
    }

    private func sniff(bytes: [UInt8], lookingForVideo: Bool) throws(SniffError) -> Sniff {
        let answer: MagicAnswer
        do {
            answer = try identify(bytes[...], describing: description == .always)
        } catch { throw SniffError(error) }
        var result = Sniff(
            mime: answer.mime, description: answer.description,
            formatName: AttachmentFormat.forMIME(answer.mime)?.name, hasVideoTrack: nil, notes: [])
        if result.formatName == nil, let tagEnd = Self.id3TagEnd(bytes), tagEnd < bytes.count {
            if let inner = try? identify(bytes[tagEnd...], describing: true),
                AttachmentFormat.forMIME(inner.mime)?.name == "mp3"
            {
                result = Sniff(
                    mime: inner.mime, description: "Audio file with ID3 version 2 tag, " + inner.description,
                    formatName: "mp3", hasVideoTrack: nil,
                    notes: ["an ID3v2 tag of \(tagEnd) bytes precedes the MPEG audio frames"])
            }
        }
        if result.formatName == nil && description == .unsupportedOnly {
            do { result.description = try identify(bytes[...], describing: true).description } catch {
                throw SniffError(error)
            }
        }
        if lookingForVideo, result.formatName == "mp4" || result.formatName == "m4a",
            let box = MPEG4Box.brands(of: bytes)
        {
            let video = MPEG4Box.hasVideoTrack(bytes)
            result.hasVideoTrack = video
            result.notes.append(
                "MPEG-4 major brand '\(box.major)'"
                    + (video ? ", has a video track" : ", no video track: MPEG-4 audio"))
        }
        return result
    }

    /// The first look: media signatures sit in the first few kilobytes, and libmagic's cost grows
    /// with the buffer (some rules search through it).
    static let quickWindow = 8 * 1024

    /// Asks libmagic about the first ``quickWindow`` bytes of `bytes`, then, if that finds nothing,
    /// the first ``magicWindow`` bytes.
    private func identify(_ bytes: ArraySlice<UInt8>, describing: Bool) throws(MagicKitError) -> MagicAnswer {
        func ask(_ window: ArraySlice<UInt8>) throws(MagicKitError) -> MagicAnswer {
            let result = window.withUnsafeBytes { buffer in
                Result { () throws(MagicKitError) in try pool.identify(buffer, describing: describing) }
            }
            return try result.get()
        }
        let quick = try ask(bytes.prefix(Self.quickWindow))
        guard bytes.count > Self.quickWindow, AttachmentFormat.forMIME(quick.mime) == nil else { return quick }
        return try ask(bytes.prefix(Self.magicWindow))
    }

    /// The end of a leading ID3v2 tag (its 10-byte header plus syncsafe size), if the bytes start with one.
    static func id3TagEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 10, bytes[0] == 0x49, bytes[1] == 0x44, bytes[2] == 0x33 else { return nil }
        let size = bytes[6..<10].reduce(0) { ($0 << 7) | Int($1 & 0x7f) }
        let footer = (bytes[5] & 0x10) != 0 ? 10 : 0
        return 10 + size + footer
    }
}

/// Reads the few MPEG-4 boxes the sniffer needs.
enum MPEG4Box {
    /// The `ftyp` box's major brand and compatible brands, when the file starts with one.
    static func brands(of bytes: [UInt8]) -> (major: String, compatible: [String])? {
        guard bytes.count >= 16, String(decoding: bytes[4..<8], as: UTF8.self) == "ftyp" else { return nil }
        let size = bytes[0..<4].reduce(0) { ($0 << 8) | Int($1) }
        let end = min(max(size, 16), bytes.count)
        let major = String(decoding: bytes[8..<12], as: UTF8.self)
        let compatible = stride(from: 16, to: end - 3, by: 4).map {
            String(decoding: bytes[$0..<($0 + 4)], as: UTF8.self)
        }
        return (major, compatible)
    }

    /// Whether any track's handler (`hdlr` box) is `vide`, in the bytes read.
    static func hasVideoTrack(_ bytes: [UInt8]) -> Bool {
        let hdlr: [UInt8] = Array("hdlr".utf8)
        let vide: [UInt8] = Array("vide".utf8)
        var index = 0
        while index + 16 <= bytes.count {
            if bytes[index] == hdlr[0] && Array(bytes[index..<(index + 4)]) == hdlr {
                // hdlr: type, version/flags (4), pre_defined (4), handler_type (4).
                if Array(bytes[(index + 12)..<(index + 16)]) == vide { return true }
            }
            index += 1
        }
        return false
    }
}

/// Sniffing failed: the file could not be read or libmagic is unusable.
public struct SniffError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// The failed system call, with its errno, when that is why.
    public var systemError: SystemError?
    init(_ message: String) { self.message = message }

    /// Reading the file failed: the system call's words, and its errno, are the error's.
    init(_ error: SystemError) {
        message = error.message
        systemError = error
    }

    /// libmagic's failure; running out of descriptors is noted (``DescriptorExhaustion``), so the
    /// verdict blames the client, not the asset.
    init(_ error: MagicKitError) {
        if case .outOfDescriptors = error { DescriptorExhaustion.note() }
        message = error.description
    }
    public var description: String { message }
}
