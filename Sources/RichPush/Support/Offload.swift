import Dispatch

/// Runs blocking work (file writes, hashing, libmagic) off Swift's cooperative thread pool.
///
/// The cooperative pool has one thread per core; a task that blocks in a system call or a
/// semaphore holds one of them, and on a 2-core machine two such tasks stall every other task in
/// the process (download completions included). Dispatch's global queue adds threads when its
/// work blocks, so blocking stages go there and the caller awaits the result.
enum Offload {
    private static let queue = DispatchQueue(label: "richpush.blocking", attributes: .concurrent)

    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }
}
