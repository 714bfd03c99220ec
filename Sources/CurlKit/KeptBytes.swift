import Glibc

/// Bytes a transfer kept for its verdict, read in place: a C sink's buffer taken over when the transfer
/// ends, or an array.
///
/// The sniffer hands these bytes to libmagic as they are, so the head of a download that is only
/// sniffed is never copied into Swift.
///
/// Immutable once made, and the buffer it took over is freed exactly once, with the last reference:
/// that is what makes the `@unchecked Sendable` sound.
package final class KeptBytes: @unchecked Sendable, Equatable {
    private enum Storage {
        case array([UInt8])
        /// A `malloc` allocation this object owns.
        case owned(UnsafeMutableRawPointer, Int)
    }

    private let storage: Storage

    /// Holds `bytes` (no copy).
    package init(_ bytes: [UInt8]) {
        storage = .array(bytes)
    }

    /// Takes over `count` bytes at `base`, an allocation from `malloc` (or `realloc`) that nothing else
    /// frees from now on; `nil` holds no bytes.
    init(taking base: UnsafeMutableRawPointer?, count: Int) {
        if let base {
            storage = .owned(base, count)
        } else {
            storage = .array([])
        }
    }

    deinit {
        if case .owned(let base, _) = storage { free(base) }
    }

    /// How many bytes are kept.
    package var count: Int {
        switch storage {
        case .array(let bytes): bytes.count
        case .owned(_, let count): count
        }
    }

    /// Calls `body` with the bytes where they lie; the pointer is valid only inside `body`.
    package func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        switch storage {
        case .array(let bytes):
            let result = bytes.withUnsafeBytes { buffer in Swift.Result { () throws(Failure) in try body(buffer) } }
            return try result.get()
        case .owned(let base, let count):
            return try body(UnsafeRawBufferPointer(start: base, count: count))
        }
    }

    /// A copy of the bytes, for callers that need an array.
    package var array: [UInt8] {
        switch storage {
        case .array(let bytes): bytes
        case .owned(let base, let count): Array(UnsafeRawBufferPointer(start: base, count: count))
        }
    }

    package static func == (left: KeptBytes, right: KeptBytes) -> Bool {
        left === right
            || left.withUnsafeBytes { a in right.withUnsafeBytes { b in a.elementsEqual(b) } }
    }
}
