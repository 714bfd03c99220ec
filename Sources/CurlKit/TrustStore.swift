import CCurlShim
import Foundation
import Synchronization

/// The certificates servers are verified against: read once per process from PEM files, shared by
/// every TLS connection of every loop, and only when a connection needs them.
///
/// libcurl 7.88 reuses its certificate store only when trust comes from a CA file alone; Debian's
/// libcurl also sets a CA path, so by default every fresh connection parses the whole system bundle
/// again (about 23 ms of CPU each on an idle core, several times that on a busy one). richpush instead
/// builds one store from the system bundle plus the extra CA file and hands it to each connection;
/// verification itself is unchanged and always on.
///
/// Reading the system bundle is most of a short run's CPU (about half of `richpush process` on an
/// http URL), so the store is read when it is first needed: before an https transfer starts
/// (``ensureBuilt()``, so an unreadable file refuses the transfer with its name), or, for an http
/// transfer that curl redirects to https, in the handshake's SSL_CTX callback.
///
/// OpenSSL locks an `X509_STORE` internally, and nothing changes it once built, so connections on
/// any thread may share it.
final class TrustStore: @unchecked Sendable {
    /// What a store is built from: the files, in order.
    struct Source: Hashable {
        var files: [String]
    }

    /// Why a store could not be built.
    struct Failure: Error {
        let file: String
        let reason: String
    }

    let handle: OpaquePointer
    let source: Source

    private static let stores = Mutex<[Source: TrustStore]>([:])

    /// The store for `source`, shared by every caller (its files are read on first need); nil only
    /// when there is no memory for it.
    static func shared(_ source: Source) -> TrustStore? {
        stores.withLock { stores in
            if let store = stores[source] { return store }
            let store = TrustStore(source)
            stores[source] = store
            return store
        }
    }

    /// How many times the store for `source` was read in this process: at most once, for tests.
    static func buildCount(_ source: Source) -> Int {
        guard let store = stores.withLock({ $0[source] }) else { return 0 }
        return Int(rp_trust_store_builds(store.handle))
    }

    /// The CA bundle libcurl uses by default on this system (Debian: /etc/ssl/certs/ca-certificates.crt).
    static let systemBundle: String? = {
        CurlRuntime.ensureInitialized()
        guard let path = rp_default_ca_file() else { return nil }
        defer { free(path) }
        return String(cString: path)
    }()

    private init?(_ source: Source) {
        let cStrings = source.files.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        let pointers = cStrings.map { UnsafePointer($0) }
        guard let store = pointers.withUnsafeBufferPointer({ rp_trust_store_create($0.baseAddress, Int32($0.count)) })
        else { return nil }
        handle = store
        self.source = source
    }

    /// Reads the files now unless that was done before; a failure names the file and OpenSSL's reason,
    /// and is not kept (the next call tries again).
    func ensureBuilt() throws(Failure) {
        var failedIndex: Int32 = -1
        var error = [CChar](repeating: 0, count: 256)
        guard rp_trust_store_build(handle, &failedIndex, &error, error.count) == 0 else { return }
        let index = Int(failedIndex)
        let file = source.files.indices.contains(index) ? source.files[index] : source.files.joined(separator: ", ")
        let end = error.firstIndex(of: 0) ?? error.endIndex
        throw Failure(file: file, reason: String(decoding: error[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    deinit { rp_trust_store_release(handle) }
}

/// Counts the certificates of a PEM file's content, as the trust store will read them.
package enum PEMCertificates {
    /// The number of certificates in `bytes`, or OpenSSL's reason when a block does not decode.
    package static func count(in bytes: [UInt8]) -> Result<Int, PEMDecodingFailure> {
        var error = [CChar](repeating: 0, count: 256)
        let count = bytes.withUnsafeBufferPointer { buffer in
            rp_count_pem_certificates(buffer.baseAddress, buffer.count, &error, error.count)
        }
        guard count >= 0 else {
            let end = error.firstIndex(of: 0) ?? error.endIndex
            return .failure(
                PEMDecodingFailure(reason: String(decoding: error[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self))
            )
        }
        return .success(Int(count))
    }
}

/// A PEM block that starts like a certificate and does not decode.
package struct PEMDecodingFailure: Error, Sendable {
    /// OpenSSL's words.
    package var reason: String
}
