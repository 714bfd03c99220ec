import Foundation

/// Runs blocking work (file writes, journal appends, libmagic) off Swift's cooperative thread pool.
///
/// The cooperative pool has one thread per core; a task that blocks in a system call or a
/// semaphore holds one of them, and on a 2-core machine two such tasks stall every other task in
/// the process (download completions included). Blocking stages go to `BlockingPool.shared`, a
/// fixed set of threads sized to the cores, and the caller awaits the result. A Dispatch queue
/// would do the same but adds a thread for every call that blocks: with 2,000 devices in flight
/// that is a thread (and its stack) per blocked write.
package enum Offload {
    package static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await BlockingPool.shared.run(body)
    }
}

/// A fixed number of threads that run blocking jobs in the order they were submitted.
///
/// The threads start with the first job and live until `shutdown()`; jobs beyond `size` wait in a
/// FIFO queue. A job must not wait for another job of the same pool (none does: every offloaded
/// stage is a self-contained read, write or sniff).
final class BlockingPool: @unchecked Sendable {
    /// The pool the pipeline uses: one thread per core, at least two.
    static let shared = BlockingPool(size: max(2, ProcessInfo.processInfo.activeProcessorCount))

    /// The most threads this pool runs.
    let size: Int

    // Everything below is guarded by `condition`.
    private let condition = NSCondition()
    private var queue: [@Sendable () -> Void] = []
    private var head = 0
    private var threads = 0
    private var busy = 0
    private var peak = 0
    private var stopping = false

    init(size: Int) {
        self.size = max(1, size)
    }

    /// Runs `body` on one of the pool's threads and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: body()) }
        }
    }

    /// Queues `job`; it runs on one of the pool's threads.
    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        queue.append(job)
        let start = threads == 0 ? size : 0
        threads += start
        condition.signal()
        condition.unlock()
        for _ in 0..<start {
            let thread = Thread { [self] in work() }
            thread.name = "richpush.blocking"
            thread.start()
        }
    }

    /// The threads started so far and the most jobs that ran at once (for tests and reports).
    var statistics: (threads: Int, peakBusy: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (threads, peak)
    }

    /// Lets the threads end once the queued jobs are done (pools other than `shared`).
    func shutdown() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        condition.lock()
        while true {
            if head < queue.count {
                let job = queue[head]
                head += 1
                if head > 64 && head * 2 > queue.count {
                    queue.removeFirst(head)
                    head = 0
                }
                busy += 1
                peak = max(peak, busy)
                condition.unlock()
                job()
                condition.lock()
                busy -= 1
            } else if stopping {
                threads -= 1
                condition.unlock()
                return
            } else {
                condition.wait()
            }
        }
    }
}
