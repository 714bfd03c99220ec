import CCrypto

/// SHA-256 over bytes fed in pieces: the only Swift code that touches OpenSSL's libcrypto.
///
/// ```swift
/// var digest = SHA256Digest()
/// bytes.withUnsafeBytes { digest.update($0) }
/// let hex = digest.hex()   // "ba7816bf..." for "abc"
/// ```
///
/// Non-copyable: the libcrypto context it owns is freed exactly once, when the digest goes.
package struct SHA256Digest: ~Copyable {
    private let context: OpaquePointer?

    /// A digest with nothing fed yet.
    package init() {
        let created = EVP_MD_CTX_new()
        if let created, EVP_DigestInit_ex(created, EVP_sha256(), nil) != 1 {
            EVP_MD_CTX_free(created)
            context = nil
        } else {
            context = created
        }
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Feeds the next piece of the input.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let context, let base = bytes.baseAddress else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// The 32-byte digest; `nil` if libcrypto failed (out of memory).
    package consuming func finalize() -> [UInt8]? {
        guard let context else { return nil }
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &digest, &length) == 1, length == 32 else { return nil }
        return digest
    }

    /// The digest as lower-case hex; `nil` if libcrypto failed.
    package consuming func hex() -> String? {
        finalize().map { digest in digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }
    }

    /// The SHA-256 of `bytes` as lower-case hex; `nil` if libcrypto failed.
    package static func hex(of bytes: [UInt8]) -> String? {
        var digest = SHA256Digest()
        bytes.withUnsafeBytes { digest.update($0) }
        return digest.hex()
    }
}
