import CCurlShim
import Glibc

extension BodySummary {
    /// What `sink` kept, taken over without a copy: the head and the bytes after an ID3v2 tag become the
    /// summary's own (the sink lets go of them, so ``rp_sink_release`` no longer frees them), and the
    /// SHA-256 is finished. Call it once, when the transfer is done, on the loop thread that owns the sink.
    init(takingFrom sink: UnsafeMutablePointer<rp_sink>) {
        self.init()
        keptHead = KeptBytes(taking: UnsafeMutableRawPointer(sink.pointee.head), count: sink.pointee.head_length)
        sink.pointee.head = nil
        sink.pointee.head_length = 0
        let after = sink.pointee.after_tag
        let afterLength = sink.pointee.after_tag_length
        sink.pointee.after_tag = nil
        sink.pointee.after_tag_length = 0
        if sink.pointee.media.tag_end >= 0 {
            tagEnd = Int(sink.pointee.media.tag_end)
            if let after { keptAfterTag = KeptBytes(taking: UnsafeMutableRawPointer(after), count: afterLength) }
        } else {
            free(after)
        }
        videoHandler = sink.pointee.media.video_handler != 0
        var digest = [UInt8](repeating: 0, count: 32)
        if rp_sink_digest(sink, &digest) != 0 {
            sha256 = digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }
    }
}
