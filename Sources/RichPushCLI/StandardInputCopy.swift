import Digest
import Foundation
import POSIXKit
import RichPush

/// `batch -`: NDJSON read from stdin, kept as `OUTDIR/.richpush/stdin-<sha256>` so the run (and its
/// resume) reads a file like any other input.
///
/// The name carries the content's SHA-256 (its first 12 hex digits): the same stdin again resumes
/// the same payloads (`payloads/stdin-<digest>/<line>.json`), and a second batch started on the same
/// OUTDIR (which it will then refuse, exit 74) never replaces the file the first one reads.
///
/// The copy streams in 64 KiB chunks (a campaign of millions of lines never sits in memory), goes to
/// an exclusive temporary beside its destination and takes its name only once stdin has ended, so an
/// interrupted copy leaves nothing. Ctrl-C stops a copy whose writer never finishes.
enum StandardInputCopy {

    /// Copies stdin into `outFolder`'s `.richpush` folder and returns the copy's path.
    static func save(in outFolder: String) throws -> String {
        let folder = outFolder + "/.richpush"
        do {
            try SystemCall.makeFolders(folder, operation: "create the output folder")
            let temporary = try TemporaryFile.create(in: folder, prefix: ".richpush-")
            defer { temporary.discard() }
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            var digest = SHA256Digest()
            while true {
                let ready = try SystemCall.waitReadable(0, milliseconds: 100, path: "stdin")
                if TerminationSignal.received { throw CommandFailure(.interrupted, "interrupted while reading stdin.") }
                guard ready != 0 else { continue }
                let capacity = chunk.count
                let got = try SystemCall.retrying("read", path: "stdin") { read(0, &chunk, capacity) }
                if got == 0 { break }
                let bytes = Array(chunk[0..<got])
                bytes.withUnsafeBytes { digest.update($0) }
                try SystemCall.writeAll(temporary.descriptor, bytes, path: folder)
            }
            let destination = folder + "/stdin-" + String((digest.hex() ?? "unknown").prefix(12))
            try temporary.commit(as: destination)
            return destination
        } catch let error as SystemError {
            throw CommandFailure(.ioError, "cannot keep stdin in \(folder): \(error.message)")
        }
    }
}
