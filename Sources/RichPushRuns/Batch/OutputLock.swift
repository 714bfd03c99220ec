import Foundation
import POSIXKit
import RichPush

/// An exclusive hold on a batch's output folder, so two batches never write one folder at once.
///
/// The hold is a `flock` on `OUTDIR/.richpush/lock`, taken without waiting; the holder writes its
/// process id and start time into the file so a refused run can name it. The kernel drops the lock
/// when the process ends, however it ends, so a killed run never leaves the folder locked.
///
/// ```swift
/// let lock = try OutputLock.acquire(folder: "batch-out")
/// defer { lock.release() }
/// ```
package final class OutputLock: Sendable {
    /// The lock file.
    package let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Takes the folder's lock, or throws naming the folder and the run that holds it.
    package static func acquire(folder: String) throws(StoreError) -> OutputLock {
        let state = folder + "/.richpush"
        if mkdir(state, 0o700) != 0 && errno != EEXIST {
            throw StoreError.output(SystemError.current("create", path: state))
        }
        let path = state + "/lock"
        let descriptor: Int32
        let locked: Bool
        do throws(SystemError) {
            descriptor = try SystemCall.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode: 0o600)
            do throws(SystemError) { locked = try SystemCall.lockExclusively(descriptor, path: path) } catch {
                close(descriptor)
                throw error
            }
        } catch {
            throw StoreError.output(error)
        }
        guard locked else {
            let holder = holder(descriptor)
            close(descriptor)
            throw StoreError.output(
                "'\(folder)' is in use by another richpush batch (\(holder.isEmpty ? "unknown process" : holder)): "
                    + "wait for it to finish, or give this run another \(Setting.out) folder")
        }
        let text = "pid \(getpid()), started \(Date().formatted(.iso8601))"
        if (try? SystemCall.truncate(descriptor, to: 0, path: path)) != nil {
            _ = Array(text.utf8).withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }
        return OutputLock(path: path, descriptor: descriptor)
    }

    /// What the holder wrote into the lock file (its process id and start time).
    private static func holder(_ descriptor: Int32) -> String {
        var bytes = [UInt8](repeating: 0, count: 200)
        let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard got > 0 else { return "" }
        return String(decoding: bytes[..<got], as: UTF8.self).filter { (0x20..<0x7f).contains($0.asciiValue ?? 0) }
    }

    /// Lets the folder go (also done when the object goes, or the process ends).
    package func release() {
        flock(descriptor, LOCK_UN)
    }
}
