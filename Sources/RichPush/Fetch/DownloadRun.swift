import Foundation

/// The summary of downloading one URL many times: throughput, latency and failures.
public struct DownloadRunSummary: Sendable, Codable {
    public var url: String
    public var downloads: Int
    public var concurrency: Int
    public var connections: String
    public var loops: Int
    public var succeeded: Int
    /// Failures counted by ``FetchError/Code`` name.
    public var failures: [String: Int]
    public var bytes: Int64
    public var seconds: Double
    public var downloadsPerSecond: Double
    public var megabytesPerSecond: Double
    /// Total download time percentiles in milliseconds: p50, p90, p99, max.
    public var latencyMilliseconds: [String: Double]
}

/// Downloads one URL `count` times with at most `concurrency` in flight: the engine's throughput test.
///
/// Bodies are discarded (counted, not stored), as load tools do, so the run measures the network
/// path and the engine, not the disk.
public enum DownloadRun {
    public static func run(
        engine: FetchEngine, url: String, count: Int, concurrency: Int, budget: Duration, policy: FetchPolicy
    ) async -> DownloadRunSummary {
        let started = ContinuousClock.now
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        var failures: [String: Int] = [:]
        var bytes: Int64 = 0
        await withTaskGroup(of: Result<FetchResult, FetchError>.self) { group in
            var launched = 0
            func launch() {
                group.addTask {
                    let request = FetchRequest(url: url, budget: budget, policy: policy)
                    do throws(FetchError) {
                        return .success(try await engine.fetch(request, writingTo: -1))
                    } catch {
                        return .failure(error)
                    }
                }
                launched += 1
            }
            while launched < min(count, max(1, concurrency)) { launch() }
            for await outcome in group {
                switch outcome {
                case .success(let result):
                    latencies.append(result.timings.total.inMilliseconds)
                    bytes += result.bytes
                case .failure(let error):
                    failures[error.code.description, default: 0] += 1
                }
                if launched < count { launch() }
            }
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
