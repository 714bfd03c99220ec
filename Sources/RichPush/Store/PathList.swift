import Synchronization

/// Paths collected from many tasks.
final class PathList: Sendable {
    private let paths = Mutex<[String]>([])

    func append(_ path: String) { paths.withLock { $0.append(path) } }

    /// The paths so far; the list is left empty.
    func takeAll() -> [String] {
        paths.withLock { paths in
            defer { paths.removeAll() }
            return paths
        }
    }
}
