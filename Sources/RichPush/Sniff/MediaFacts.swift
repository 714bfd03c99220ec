import CMediaScan

/// What CMediaScan tells of a file's media structure: the rules the curl sink applies to a streamed
/// body, applied to bytes in memory.
struct MediaFacts: Sendable, Equatable {
    /// Where a leading ID3v2 tag ends (where the audio starts), when the bytes start with one.
    var tagEnd: Int?
    /// An MPEG-4 track handler of type `vide` lies within the scan's limit.
    var videoHandler: Bool
    /// The bytes may be an MPEG-4 file: they start with an `ftyp` box's size and type.
    var mayBeMPEG4: Bool

    /// Scans `bytes`, a file's first bytes, looking for a video handler within the first `limit` of them.
    init(scanning bytes: UnsafeRawBufferPointer, limit: Int) {
        var scan = rp_media_scan()
        rp_media_scan_buffer(&scan, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, Int64(limit))
        tagEnd = scan.tag_end >= 0 ? Int(scan.tag_end) : nil
        videoHandler = scan.video_handler != 0
        mayBeMPEG4 = scan.seen >= 8 && scan.not_mpeg4 == 0
    }

    /// The major brand of the `ftyp` box `bytes` start with, if they start with one.
    static func majorBrand(of bytes: UnsafeRawBufferPointer) -> String? {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var brands = rp_mpeg4_brands()
        guard rp_mpeg4_brands_of(base, bytes.count, &brands) != 0 else { return nil }
        return withUnsafeBytes(of: brands.major) { String(decoding: $0, as: UTF8.self) }
    }
}
