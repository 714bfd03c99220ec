import CCrypto

/// SHA-256 over bytes fed in pieces, through OpenSSL's libcrypto.
struct SHA256Digest: ~Copyable {
    private let context: OpaquePointer?

    init() {
        context = EVP_MD_CTX_new()
        if let context { EVP_DigestInit_ex(context, EVP_sha256(), nil) }
    }

    deinit { EVP_MD_CTX_free(context) }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let context, let base = bytes.baseAddress else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// The digest as lower-case hex; `nil` if libcrypto failed.
    consuming func hex() -> String? {
        guard let context else { return nil }
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &digest, &length) == 1, length == 32 else { return nil }
        return digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
