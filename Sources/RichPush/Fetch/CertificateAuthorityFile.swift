import CurlKit
import Foundation
import POSIXKit

/// The CA file a user gives to trust besides the system's: checked once, before any download, so a
/// file that holds no certificate is refused at start instead of failing every download as `tls-failed`.
///
/// ```swift
/// let count = try CertificateAuthorityFile.check("Samples/certs/ca.pem")   // 1
/// ```
package enum CertificateAuthorityFile {
    /// Files over this size are not CA files (Debian's whole system bundle is about 200 KB).
    package static let maxBytes = 16 * 1024 * 1024

    /// `--cacert FILE` checked as every command checks it, before any download: a file that cannot be
    /// used is `unusable-input` (`--cacert: the CA file ...`), and no descriptor left to open it is
    /// `too-few-descriptors`, the client's limit.
    package static func checkOption(_ path: String) throws(ConfigurationError) {
        do throws(Failure) { _ = try check(path) } catch {
            if error.code == .tooManyOpenFiles {
                throw ConfigurationError(
                    .tooFewDescriptors,
                    "too many open files: richpush could not open the CA file \(path.escapingControlCharacters); "
                        + "raise 'ulimit -n' and run again")
            }
            throw ConfigurationError(.unusableInput, "\(Setting.caFile): " + error.message)
        }
    }

    /// Why a CA file cannot be used.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// A stable name for each way a CA file can be unusable.
        package enum Code: String, Sendable {
            /// Nothing is at the path.
            case missing
            /// It cannot be opened or read (permissions, a folder, a FIFO or device).
            case unreadable
            /// It is larger than ``CertificateAuthorityFile/maxBytes``.
            case tooLarge = "too-large"
            /// It holds no PEM certificate (`-----BEGIN CERTIFICATE-----`).
            case noCertificate = "no-certificate"
            /// A certificate block in it does not decode.
            case damaged
            /// The process had no descriptor left to open it: the client's limit, not the file's fault.
            case tooManyOpenFiles = "too-many-open-files"
        }

        package var code: Code
        /// What is wrong with the file and what to give instead, naming it.
        package var message: String
        /// The lower-level cause (the system's or OpenSSL's words), for people.
        package var cause: String?

        package var description: String { message }
    }

    /// Reads the file at `path` and returns how many certificates it holds (at least one).
    package static func check(_ path: String) throws(Failure) -> Int {
        let shown = path.escapingControlCharacters
        let what = "give the CA certificate (PEM) that signs the server's certificate"
        let descriptor: Int32
        do {
            descriptor = try SystemCall.openRegularFile(path)
        } catch {
            let code: Failure.Code =
                switch error.code {
                case ENOENT, ENOTDIR: .missing
                case EMFILE, ENFILE: .tooManyOpenFiles
                default: .unreadable
                }
            let words = code == .missing ? "no file there" : "cannot read it (\(error.cause))"
            throw Failure(code: code, message: "the CA file \(shown): \(words); \(what)", cause: error.message)
        }
        defer { close(descriptor) }
        let bytes: [UInt8]
        do {
            bytes = try SystemCall.readAll(descriptor, upTo: maxBytes + 1, path: path)
        } catch {
            throw Failure(
                code: .unreadable, message: "the CA file \(shown): cannot read it (\(error.cause)); \(what)",
                cause: error.message)
        }
        guard bytes.count <= maxBytes else {
            throw Failure(
                code: .tooLarge,
                message: "the CA file \(shown) is over \(maxBytes / 1024 / 1024) MiB, which no CA file is; \(what)")
        }
        switch PEMCertificates.count(in: bytes) {
        case .failure(let failure):
            throw Failure(
                code: .damaged, message: "the CA file \(shown) holds a certificate that does not decode; \(what)",
                cause: failure.reason)
        case .success(0):
            throw Failure(
                code: .noCertificate,
                message: "the CA file \(shown) holds no certificate (no '-----BEGIN CERTIFICATE-----' block); \(what)")
        case .success(let count):
            return count
        }
    }
}
