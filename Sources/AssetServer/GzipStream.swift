import CAssetServerShim
import Foundation
import POSIXKit

/// Compresses a body while it is sent: the gzip bytes are produced a buffer at a time, in order,
/// so a `gzip=1&size=…` response holds one deflate state (about 256 KiB) and one input buffer,
/// never the whole body or its compressed form.
///
/// Streaming (rather than compressing once and caching per size) keeps memory flat for any size
/// and any number of distinct sizes, at the price of an unknown length: the response is chunked,
/// as nginx's on-the-fly gzip is, unless `length=` declares one.
final class GzipStream {
    private let deflater: OpaquePointer
    private var input: [UInt8]
    private var inputStart = 0
    private var inputEnd = 0
    private var inputPosition: UInt64 = 0
    private var finished = false
    /// Output bytes produced so far: the position the next ``produce(into:from:)`` must be asked for.
    private(set) var produced: UInt64 = 0

    /// A compressor, or nil when zlib cannot allocate one.
    init?() {
        guard let deflater = rp_deflate_create(6) else { return nil }
        self.deflater = deflater
        input = [UInt8](repeating: 0, count: 64 * 1024)
    }

    deinit { rp_deflate_destroy(deflater) }

    /// Writes the next compressed bytes of `source` into `buffer`: a count (0 once the stream has
    /// ended), or nil on an error.
    func produce(into buffer: UnsafeMutableRawBufferPointer, from source: BodySource) -> Int? {
        guard let out = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var written = 0
        // Loop until deflate emits something: on zeros it can swallow megabytes before its first block.
        while written == 0 && !finished {
            if inputStart == inputEnd, !source.isExhausted(at: inputPosition) {
                let got = input.withUnsafeMutableBytes { source.fill($0, at: inputPosition) }
                guard got > 0 else { return nil }
                inputStart = 0
                inputEnd = got
                inputPosition += UInt64(got)
            }
            let last = source.isExhausted(at: inputPosition)
            var consumed = 0
            var done: Int32 = 0
            let step = input.withUnsafeBufferPointer { all in
                rp_deflate_step(
                    deflater, all.baseAddress.map { $0 + inputStart }, inputEnd - inputStart, last ? 1 : 0,
                    out + written, buffer.count - written, &consumed, &done)
            }
            guard step >= 0 else { return nil }
            inputStart += consumed
            written += step
            finished = done != 0
            // Input left, room left, yet nothing moved: zlib is stuck; never spin on it.
            if step == 0 && consumed == 0 && !finished && inputStart < inputEnd { return nil }
        }
        produced += UInt64(written)
        return written
    }
}

/// The uncompressed bytes of a body: the file, then zero bytes up to the logical length (`size=`,
/// `endless=`), or the file cut short.
struct BodySource {
    let descriptor: Int32
    let fileSize: UInt64
    /// nil: endless.
    let length: UInt64?

    /// Whether `position` is at or past the end.
    func isExhausted(at position: UInt64) -> Bool {
        guard let length else { return false }
        return position >= length
    }

    /// Copies up to `buffer.count` bytes at `position`; returns the count (0 at the end), or -1 on a read error.
    func fill(_ buffer: UnsafeMutableRawBufferPointer, at position: UInt64) -> Int {
        guard let base = buffer.baseAddress else { return -1 }
        var count = UInt64(buffer.count)
        if let length { count = min(count, length - min(position, length)) }
        guard count > 0 else { return 0 }
        var copied = 0
        if position < fileSize {
            let fromFile = Int(min(count, fileSize - position))
            let window = UnsafeMutableRawBufferPointer(start: base, count: fromFile)
            guard let got = try? SystemCall.preadAll(descriptor, into: window, offset: Int64(position)), got > 0
            else { return -1 }
            copied = got
            if copied < fromFile { return copied }
        }
        if copied < Int(count) {
            // Padding past the end of the file: zero bytes.
            (base + copied).initializeMemory(as: UInt8.self, repeating: 0, count: Int(count) - copied)
            copied = Int(count)
        }
        return copied
    }
}
