import CCurlShim
import Foundation
import Synchronization

/// The certificates servers are verified against: built once per process from PEM files, shared by
/// every TLS connection of every loop.
///
/// libcurl 7.88 reuses its certificate store only when trust comes from a CA file alone; Debian's
/// libcurl also sets a CA path, so by default every fresh connection parses the whole system bundle
/// again (about 23 ms of CPU each on an idle core, several times that on a busy one). richpush instead
/// builds one store from the system bundle plus the extra CA file, the first time a loop needs it, and
/// hands it to each connection; verification itself is unchanged and always on.
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

    /// One slot per trust source, each with its own lock, so building one store never holds up a
    /// loop that needs another.
    private final class Slot: Sendable {
        let store = Mutex<Result<TrustStore, Failure>?>(nil)
    }

    private static let slots = Mutex<[Source: Slot]>([:])
    private static let builds = Mutex<[Source: Int]>([:])

    /// The store for `source`, built on first use; a second caller for the same source waits for that
    /// build. A failed build is not kept: the file may be fixed by the next try.
    static func shared(_ source: Source) throws(Failure) -> TrustStore {
        let slot = slots.withLock { slots in
            if let slot = slots[source] { return slot }
            let slot = Slot()
            slots[source] = slot
            return slot
        }
        let result = slot.store.withLock { store -> Result<TrustStore, Failure> in
            if case .success(let built)? = store { return .success(built) }
            do throws(Failure) {
                let built = try TrustStore(source)
                builds.withLock { $0[source, default: 0] += 1 }
                store = .success(built)
                return .success(built)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// How many times the store for `source` was built in this process: at most once, for tests.
    static func buildCount(_ source: Source) -> Int {
        builds.withLock { $0[source] ?? 0 }
    }

    /// The CA bundle libcurl uses by default on this system (Debian: /etc/ssl/certs/ca-certificates.crt).
    static let systemBundle: String? = {
        CurlRuntime.ensureInitialized()
        guard let path = rp_default_ca_file() else { return nil }
        defer { free(path) }
        return String(cString: path)
    }()

    init(_ source: Source) throws(Failure) {
        var failedIndex: Int32 = -1
        var error = [CChar](repeating: 0, count: 256)
        let cStrings = source.files.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        let pointers = cStrings.map { UnsafePointer($0) }
        let store = pointers.withUnsafeBufferPointer { files in
            rp_trust_store_create(files.baseAddress, Int32(files.count), &failedIndex, &error, error.count)
        }
        guard let store else {
            let index = Int(failedIndex)
            let file = source.files.indices.contains(index) ? source.files[index] : source.files.joined(separator: ", ")
            let end = error.firstIndex(of: 0) ?? error.endIndex
            throw Failure(
                file: file, reason: String(decoding: error[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        handle = store
    }

    deinit { rp_trust_store_release(handle) }
}

/// Counts the certificates of a PEM file's content, as the trust store will read them.
public enum PEMCertificates {
    /// The number of certificates in `bytes`, or OpenSSL's reason when a block does not decode.
    public static func count(in bytes: [UInt8]) -> Result<Int, PEMDecodingFailure> {
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
public struct PEMDecodingFailure: Error, Sendable {
    /// OpenSSL's words.
    public var reason: String
}
