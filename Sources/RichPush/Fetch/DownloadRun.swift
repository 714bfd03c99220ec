import Foundation
import Synchronization

/// The summary of downloading one URL many times: throughput, latency and failures.
package struct DownloadRunSummary: Sendable, Codable {
    package var url: String
    package var downloads: Int
    package var concurrency: Int
    package var connections: String
    package var loops: Int
    package var succeeded: Int
    /// Failures counted by ``FetchError/Code`` name.
    package var failures: [String: Int]
    package var bytes: Int64
    package var seconds: Double
    package var downloadsPerSecond: Double
    package var megabytesPerSecond: Double
    /// Total download time percentiles in milliseconds: p50, p90, p99, max.
    package var latencyMilliseconds: [String: Double]

    enum CodingKeys: String, CodingKey {
        case url, downloads, concurrency, connections, loops, succeeded, failures, bytes, seconds
        case downloadsPerSecond = "downloads_per_second"
        case megabytesPerSecond = "megabytes_per_second"
        case latencyMilliseconds = "latency_ms"
    }
}

/// Downloads one URL `count` times with at most `concurrency` in flight: the engine's throughput test.
///
/// Bodies are discarded (counted, not stored), as load tools do, so the run measures the network
/// path and the engine, not the disk.
package enum DownloadRun {
    package static func run(
        engine: FetchEngine, url: String, count: Int, concurrency: Int, budget: Duration, policy: FetchPolicy
    ) async -> DownloadRunSummary {
        let started = ContinuousClock.now
        // `concurrency` workers, each downloading one after another, take numbers from a shared
        // counter: one task per worker rather than one per download keeps scheduling off the hot path.
        let next = Ticket()
        let workers = max(1, min(concurrency, count))
        let partials = await withTaskGroup(of: WorkerTally.self) { group in
            for _ in 0..<workers {
                group.addTask {
                    var tally = WorkerTally()
                    while next.take() < count {
                        let request = FetchRequest(url: url, budget: budget, policy: policy)
                        do throws(FetchError) {
                            let result = try await engine.fetch(request, writingTo: -1)
                            tally.latencies.append(result.timings.total.inMilliseconds)
                            tally.bytes += result.bytes
                        } catch {
                            tally.failures[error.code.description, default: 0] += 1
                        }
                    }
                    return tally
                }
            }
            return await group.reduce(into: [WorkerTally]()) { $0.append($1) }
        }
        var latencies = partials.flatMap(\.latencies)
        let bytes = partials.reduce(0) { $0 + $1.bytes }
        let failures = partials.reduce(into: [String: Int]()) { total, tally in
            total.merge(tally.failures, uniquingKeysWith: +)
        }
        let seconds = max(1e-9, (ContinuousClock.now - started).inSeconds)
        latencies.sort()
        func percentile(_ p: Double) -> Double {
            guard !latencies.isEmpty else { return 0 }
            return latencies[min(latencies.count - 1, Int((p * Double(latencies.count)).rounded(.up)) - 1)]
        }
        return DownloadRunSummary(
            url: url, downloads: count, concurrency: concurrency, connections: policy.connections.rawValue,
            loops: engine.loopCount, succeeded: latencies.count, failures: failures, bytes: bytes,
            seconds: seconds, downloadsPerSecond: Double(count) / seconds,
            megabytesPerSecond: Double(bytes) / 1_000_000 / seconds,
            latencyMilliseconds: [
                "p50": percentile(0.5), "p90": percentile(0.9), "p99": percentile(0.99), "max": latencies.last ?? 0,
            ])
    }
}

/// One worker's share of a ``DownloadRun``.
private struct WorkerTally: Sendable {
    var latencies: [Double] = []
    var bytes: Int64 = 0
    var failures: [String: Int] = [:]
}

/// Hands out 0, 1, 2, ... to any number of tasks.
private final class Ticket: Sendable {
    private let counter = Atomic<Int>(0)
    func take() -> Int { counter.wrappingAdd(1, ordering: .relaxed).oldValue }
}
