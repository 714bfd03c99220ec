import Foundation
import Synchronization
import Testing

@testable import RichPush

@Suite struct BlockingPoolTests {
    /// What the jobs saw: how many ran at once, and on which threads.
    final class Observed: Sendable {
        let state = Mutex<(running: Int, peak: Int, threads: Set<UInt>)>((0, 0, []))

        func enter() {
            state.withLock {
                $0.running += 1
                $0.peak = max($0.peak, $0.running)
                $0.threads.insert(UInt(pthread_self()))
            }
        }

        func leave() { state.withLock { $0.running -= 1 } }
    }

    @Test func blockedJobsNeverTakeMoreThreadsThanThePoolSize() async {
        let pool = BlockingPool(size: 2)
        defer { pool.shutdown() }
        let observed = Observed()
        // 24 jobs that each block for 20 ms, all submitted at once: a queue that adds a thread per
        // blocked job would run them on many threads at once.
        let results = await withTaskGroup(of: Int.self) { group in
            for index in 0..<24 {
                group.addTask {
                    await pool.run {
                        observed.enter()
                        usleep(20_000)
                        observed.leave()
                        return index * index
                    }
                }
            }
            var all: [Int] = []
            for await value in group { all.append(value) }
            return all.sorted()
        }
        #expect(results == (0..<24).map { $0 * $0 })
        let seen = observed.state.withLock { $0 }
        #expect(seen.peak <= 2)
        #expect(seen.threads.count <= 2)
        #expect(pool.statistics.peakBusy <= 2)
        #expect(pool.statistics.peakBusy >= 1)
    }

    @Test func jobsRunInTheOrderTheyWereSubmitted() async {
        let pool = BlockingPool(size: 1)
        defer { pool.shutdown() }
        let order = Mutex<[Int]>([])
        let gate = DispatchSemaphore(value: 0)
        // The first job holds the only thread until the rest are queued.
        pool.submit { gate.wait() }
        for index in 0..<10 { pool.submit { order.withLock { $0.append(index) } } }
        gate.signal()
        let last = await pool.run { order.withLock { $0 } }
        #expect(last == Array(0..<10))
    }

    @Test func theSharedPoolIsSizedToTheCores() {
        #expect(BlockingPool.shared.size == max(2, ProcessInfo.processInfo.activeProcessorCount))
    }
}
