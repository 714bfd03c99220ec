import CurlKit
import Foundation
import MagicKit
import POSIXKit

/// What the bytes of a downloaded file really are.
public struct Sniff: Sendable, Equatable, Decodable {
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

    package init(mime: String, description: String, formatName: String?, hasVideoTrack: Bool?, notes: [String]) {
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
    /// The sniff as JSON, the shape of an outcome's `sniff` object.
    public var jsonText: String { json.text }

    package var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            (CodingKeys.mime.rawValue, .string(mime)), (CodingKeys.description.rawValue, .string(description)),
        ]
        if let formatName { members.append((CodingKeys.formatName.rawValue, .string(formatName))) }
        if let hasVideoTrack { members.append((CodingKeys.hasVideoTrack.rawValue, .bool(hasVideoTrack))) }
        members.append((CodingKeys.notes.rawValue, .array(notes.map { .string($0) })))
        return .object(members)
    }

    /// The supported format, looked up again from ``formatName``.
    package var format: AttachmentFormat? {
        formatName.flatMap { name in AttachmentFormat.all.first { $0.name == name } }
    }

    /// The format iOS attaches these bytes as when they are sent with their own type: ``format``, except
    /// that an MPEG-4 file without a video track is MPEG-4 audio (`m4a`, audio class and its 5 MB cap),
    /// whatever its brand makes libmagic say.
    package var attachableFormat: AttachmentFormat? {
        guard let format else { return nil }
        if format.name == "mp4" && hasVideoTrack == false { return AttachmentFormat.forExtension("m4a") }
        return format
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
    /// is named from its first bytes (`quickWindow`); the rest serves only to describe bytes that
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

    /// A sniffer with its own libmagic handles (opened as needed, reused).
    public init(description: Description = .always) {
        self.init(pool: MagicPool(), description: description)
    }

    /// Starts loading libmagic's database on a blocking thread, which also starts the blocking pool:
    /// a download that starts meanwhile overlaps with both instead of waiting for them after it.
    func prewarm() {
        let pool = self.pool
        BlockingPool.shared.submit { pool.prewarm() }
    }

    /// A sniffer drawing libmagic handles from `pool`.
    package init(pool: MagicPool, description: Description = .always) {
        self.pool = pool
        self.description = description
    }

    /// Sniffs the file at `path` (a symbolic link is followed); anything but a regular file (a FIFO,
    /// whose open would wait for a writer, or a device such as `/dev/zero`, which never ends and has no
    /// size) is refused without reading it, as `process` refuses it.
    public func sniff(fileAt path: String) throws(SniffError) -> Sniff {
        try sniffFile(at: path).sniff
    }

    /// Sniffs the file at `path` as ``sniff(fileAt:)`` does, and says how many bytes it holds (the
    /// size its class's cap applies to).
    package func sniffFile(at path: String) throws(SniffError) -> (sniff: Sniff, bytes: Int64) {
        let descriptor: Int32
        do { descriptor = try SystemCall.openRegularFile(path) } catch {
            throw SniffError(error)
        }
        defer { close(descriptor) }
        return try sniffSized(descriptor: descriptor)
    }

    /// Sniffs the file open at `descriptor` (read from offset 0; the offset is not moved).
    package func sniff(descriptor: Int32) throws(SniffError) -> Sniff {
        try sniffSized(descriptor: descriptor).sniff
    }

    private func sniffSized(descriptor: Int32) throws(SniffError) -> (sniff: Sniff, bytes: Int64) {
        var info = stat()
        do { try SystemCall.retrying("read the file to sniff it") { fstat(descriptor, &info) } } catch {
            throw SniffError(error)
        }
        let size = max(0, Int(info.st_size))
        // The start of the file is enough for most formats; an MPEG-4 file (to look for a video track)
        // and an MP3 behind a long ID3 tag need more: what a download's sink keeps of them.
        var bytes = try Self.read(descriptor, count: min(size, Self.magicWindow))
        let wanted = bytes.withUnsafeBytes { Self.extent(ofFileStartingWith: $0, size: size) }
        if wanted > bytes.count { bytes = try Self.read(descriptor, count: wanted) }
        return (try sniff(bytes: bytes), Int64(size))
    }

    /// How many bytes from a file's start the verdict reads, given its first ``magicWindow`` bytes: an
    /// MPEG-4 file's first ``sniffLimit`` bytes (where its handlers are looked for), and the
    /// ``magicWindow`` bytes after an ID3v2 tag that ends within them.
    static func extent(ofFileStartingWith head: UnsafeRawBufferPointer, size: Int) -> Int {
        let facts = MediaFacts(scanning: head, limit: 0)
        var wanted = head.count
        if facts.mayBeMPEG4 { wanted = sniffLimit }
        if let tagEnd = facts.tagEnd, tagEnd < sniffLimit { wanted = max(wanted, tagEnd + magicWindow) }
        return min(size, wanted)
    }

    private static func read(_ descriptor: Int32, count wanted: Int) throws(SniffError) -> [UInt8] {
        do {
            return try SystemCall.preadAll(descriptor, count: wanted, offset: 0)
        } catch {
            throw SniffError(SystemError(code: error.code, operation: "read the file to sniff it"))
        }
    }

    /// Tells what a download is from what its transfer kept as the bytes went by: the first
    /// ``magicWindow`` bytes, the bytes after a leading ID3v2 tag, and whether an MPEG-4 video handler
    /// appeared within ``sniffLimit`` bytes. The same answer as sniffing the file, without reading it;
    /// libmagic reads the kept bytes where the transfer left them.
    package func sniff(body: BodySummary) throws(SniffError) -> Sniff {
        try Self.withInput(of: body) { input throws(SniffError) in try sniff(input) }
    }

    /// Sniffs the start of a file held in memory: up to ``sniffLimit`` bytes, and the ``magicWindow``
    /// bytes after an ID3v2 tag that ends within them (`extent(ofFileStartingWith:size:)`).
    public func sniff(bytes: [UInt8]) throws(SniffError) -> Sniff {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(SniffError) in try sniff(Self.input(ofFileStart: buffer)) }
        }
        return try result.get()
    }

    /// What the sniffer reads of a file's start in memory: the same input a download's sink keeps.
    static func input(ofFileStart bytes: UnsafeRawBufferPointer) -> SniffInput {
        let facts = MediaFacts(scanning: bytes, limit: sniffLimit)
        var afterTag: UnsafeRawBufferPointer?
        if let tagEnd = facts.tagEnd, tagEnd < bytes.count, tagEnd < sniffLimit {
            afterTag = UnsafeRawBufferPointer(rebasing: bytes[tagEnd..<min(bytes.count, tagEnd + magicWindow)])
        }
        return SniffInput(
            head: UnsafeRawBufferPointer(rebasing: bytes.prefix(magicWindow)), afterTag: afterTag,
            tagEnd: facts.tagEnd, videoHandler: facts.videoHandler)
    }

    /// Calls `body` with what the sniffer reads of a download, in place (valid only inside `body`).
    static func withInput<Result>(
        of summary: BodySummary, _ body: (SniffInput) throws(SniffError) -> Result
    ) throws(SniffError) -> Result {
        try summary.keptHead.withUnsafeBytes { head throws(SniffError) in
            func input(_ afterTag: UnsafeRawBufferPointer?) -> SniffInput {
                SniffInput(
                    head: UnsafeRawBufferPointer(rebasing: head.prefix(magicWindow)),
                    afterTag: summary.tagEnd == nil ? nil : afterTag, tagEnd: summary.tagEnd,
                    videoHandler: summary.videoHandler)
            }
            guard let afterTag = summary.keptAfterTag else { return try body(input(nil)) }
            return try afterTag.withUnsafeBytes { after throws(SniffError) in
                try body(input(UnsafeRawBufferPointer(rebasing: after.prefix(magicWindow))))
            }
        }
    }

    /// The verdict, from exactly the bytes and facts in `input` (what ``SniffCache`` keys by).
    func sniff(_ input: SniffInput) throws(SniffError) -> Sniff {
        let answer: MagicAnswer
        do {
            answer = try identify(input.head, describing: description == .always)
        } catch { throw SniffError(error) }
        var result = Sniff(
            mime: answer.mime, description: answer.description,
            formatName: AttachmentFormat.forMIME(answer.mime)?.name, hasVideoTrack: nil, notes: [])
        if result.formatName == nil, let tagEnd = input.tagEnd, let afterTag = input.afterTag, !afterTag.isEmpty,
            let inner = try? identify(afterTag, describing: true),
            AttachmentFormat.forMIME(inner.mime)?.name == "mp3"
        {
            result = Sniff(
                mime: inner.mime, description: "Audio file with ID3 version 2 tag, " + inner.description,
                formatName: "mp3", hasVideoTrack: nil,
                notes: ["an ID3v2 tag of \(tagEnd) bytes precedes the MPEG audio frames"])
        }
        if result.formatName == nil && description == .unsupportedOnly {
            do { result.description = try identify(input.head, describing: true).description } catch {
                throw SniffError(error)
            }
        }
        if result.formatName == "mp4" || result.formatName == "m4a", let major = MediaFacts.majorBrand(of: input.head) {
            result.hasVideoTrack = input.videoHandler
            result.notes.append(
                "MPEG-4 major brand '\(major)'"
                    + (input.videoHandler ? ", has a video track" : ", no video track: MPEG-4 audio"))
        }
        return result
    }

    /// The first look: media signatures sit in the first few kilobytes, and libmagic's cost grows
    /// with the buffer (some rules search through it).
    static let quickWindow = 8 * 1024

    /// Asks libmagic about the first `quickWindow` bytes of `bytes`, then, if that finds nothing,
    /// the first ``magicWindow`` bytes.
    private func identify(_ bytes: UnsafeRawBufferPointer, describing: Bool) throws(MagicKitError) -> MagicAnswer {
        let quick = try pool.identify(
            UnsafeRawBufferPointer(rebasing: bytes.prefix(Self.quickWindow)), describing: describing)
        guard bytes.count > Self.quickWindow, AttachmentFormat.forMIME(quick.mime) == nil else { return quick }
        return try pool.identify(
            UnsafeRawBufferPointer(rebasing: bytes.prefix(Self.magicWindow)), describing: describing)
    }
}

/// What the sniffer reads, and all its verdict depends on: the bytes libmagic is shown and the media
/// facts of ``MediaFacts``. The buffers are borrowed: valid only where the input was handed out.
struct SniffInput {
    /// The first ``TypeSniffer/magicWindow`` bytes.
    var head: UnsafeRawBufferPointer
    /// Up to ``TypeSniffer/magicWindow`` bytes from where a leading ID3v2 tag ends, when it ends
    /// within ``TypeSniffer/sniffLimit`` bytes and before the end of the body.
    var afterTag: UnsafeRawBufferPointer?
    /// Where a leading ID3v2 tag ends.
    var tagEnd: Int?
    /// An MPEG-4 video handler lies within ``TypeSniffer/sniffLimit`` bytes.
    var videoHandler: Bool
}

/// Sniffing failed: the file could not be read or libmagic is unusable.
public struct SniffError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// The failed system call, with its errno, when that is why.
    package var systemError: SystemError?
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
