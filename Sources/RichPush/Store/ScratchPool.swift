import Glibc
import POSIXKit
import Synchronization

/// Reusable named temporary files of one store (see ``AttachmentStore``).
final class ScratchPool: TemporaryFilePool {
    private let files = Mutex<[(path: String, descriptor: Int32)]>([])
    private let capacity = 256

    /// A free temporary, re-armed for a new use.
    func take() -> TemporaryFile? {
        guard let file = files.withLock({ $0.popLast() }) else { return nil }
        let temporary = TemporaryFile(path: file.path, descriptor: file.descriptor)
        temporary.pool = self
        return temporary
    }

    /// Takes a temporary back, emptied; false when it cannot be reused (the caller removes it).
    func give(path: String, descriptor: Int32) -> Bool {
        guard (try? SystemCall.truncate(descriptor, to: 0)) != nil, lseek(descriptor, 0, SEEK_SET) == 0 else {
            return false
        }
        return files.withLock { files in
            guard files.count < capacity else { return false }
            files.append((path, descriptor))
            return true
        }
    }

    func removeAll() {
        let all = files.withLock { files in
            defer { files.removeAll() }
            return files
        }
        for file in all {
            close(file.descriptor)
            unlink(file.path)
            TemporaryFile.forget(file.path)
        }
    }

    deinit { removeAll() }
}
