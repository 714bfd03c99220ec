import CMediaScan

/// The media scanner (CMediaScan) over any bytes: a body's start as a download streams it and as a file
/// holds it.
///
/// - Scanning never traps or reads past the bytes (AddressSanitizer), whatever sizes they claim.
/// - The answers do not depend on how the bytes are cut into chunks: every split tried gives the
///   whole buffer's answers.
/// - A tag end is known exactly when the bytes start with "ID3" and hold its 10-byte header, and lies
///   within the largest size a tag can declare; a video handler is seen only in bytes that start with
///   an 'ftyp' box type and hold 'hdlr' with 'vide' 12 bytes on, within the limit.
/// - The brands of an 'ftyp' box lie within the bytes.
enum MediaScanInvariants {
    static func check(_ bytes: [UInt8]) {
        // The limit comes from the input too, so that limits inside the bytes are tried.
        let limit = bytes.count < 2 ? Int64(bytes.count) : Int64(bytes.count) - Int64(bytes[1] % 32)
        let whole = answers(bytes) { rp_media_scan_buffer(&$0, $1, bytes.count, limit) }
        let first = bytes.first.map { Int($0) } ?? 0
        let cuts = [[first % (bytes.count + 1)], [bytes.count / 3, 2 * bytes.count / 3], Array(0...bytes.count)]
        for cut in cuts {
            let split = answers(bytes) { scan, base in
                rp_media_scan_init(&scan, limit)
                var from = 0
                for to in cut + [bytes.count] where to >= from {
                    rp_media_scan_feed(&scan, base.map { $0 + from }, to - from)
                    from = to
                }
            }
            require(split == whole, "a split at \(cut.prefix(3)) changes the answers: \(split) vs \(whole)")
        }
        let tagged = bytes.count >= 10 && bytes.starts(with: Array("ID3".utf8))
        require(
            (whole.tagEnd >= 0) == tagged,
            "a tag end \(whole.tagEnd) for bytes that \(tagged ? "" : "do not ")start a tag")
        require(whole.tagEnd < 0 || (10...(10 + (1 << 28) - 1 + 10)).contains(whole.tagEnd), "a tag end out of range")
        if whole.video {
            let ftyp = bytes.count >= 8 && Array(bytes[4..<8]) == Array("ftyp".utf8)
            let within = Int(min(limit, Int64(bytes.count)))
            let found =
                within >= 16
                && (0...(within - 16)).contains { at in
                    Array(bytes[at..<(at + 4)]) == Array("hdlr".utf8)
                        && Array(bytes[(at + 12)..<(at + 16)]) == Array("vide".utf8)
                }
            require(ftyp && found, "a video handler where none lies within the limit")
        }
        var brands = rp_mpeg4_brands()
        if bytes.withUnsafeBufferPointer({ rp_mpeg4_brands_of($0.baseAddress, $0.count, &brands) }) != 0 {
            require(
                brands.compatible_offset >= 16 && brands.compatible_offset + 4 * brands.compatible_count <= bytes.count,
                "brands past the bytes")
        }
    }

    struct Answers: Equatable {
        var tagEnd: Int64
        var video: Bool
        var notMPEG4: Bool
        var seen: Int64
    }

    private static func answers(
        _ bytes: [UInt8], _ body: (inout rp_media_scan, UnsafePointer<UInt8>?) -> Void
    ) -> Answers {
        var scan = rp_media_scan()
        bytes.withUnsafeBufferPointer { body(&scan, $0.baseAddress) }
        return Answers(
            tagEnd: scan.tag_end, video: scan.video_handler != 0, notMPEG4: scan.not_mpeg4 != 0, seen: scan.seen)
    }
}
