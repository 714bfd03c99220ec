import Foundation
import RichPush

/// What the benchmarking client itself used during a run, and whether it, not the host, set the pace.
///
/// A client that is short of CPU starts devices late and reads responses late, and every late
/// moment shows up as latency: latency measured on a saturated client is not the CDN's latency.
/// The run is called client-bound when the process used more than ``cpuBound`` of its cores, when
/// devices started more than ``lagBoundMilliseconds`` late at p99 (scheduling lag, not the
/// concurrency cap), or when any device failed for lack of file descriptors.
package struct ClientLoad: Sendable, Codable, Equatable {
    /// CPU share of the cores above which the client is saturated.
    package static let cpuBound = 0.9
    /// p99 scheduling lag above which devices did not start when they should have.
    package static let lagBoundMilliseconds = 50.0

    /// User and system CPU time of the process over the run (getrusage, summed over shards).
    package var userCpuSeconds = 0.0
    package var systemCpuSeconds = 0.0
    /// Cores times wall seconds over the run (summed over shards): what 100 % CPU would be.
    package var coreSeconds = 0.0
    /// The highest CPU share of one shard (the busiest machine decides).
    package var busiestCpuShare = 0.0
    /// How late devices started against the moment they were free to start, microseconds.
    package var schedulingLag = LatencyHistogram()
    // Derived by finalize().
    /// CPU time as a share of the cores over the run (all shards together).
    package var cpuShare = 0.0
    /// p99 and max of the scheduling lag, in milliseconds.
    package var schedulingLagMilliseconds: [String: Double] = [:]
    /// Whether the measurement is client-bound.
    package var bound = false
    /// Why, in sentences; empty when it is not.
    package var boundReasons: [String] = []

    package init() {}

    /// Records the process's CPU use over a run of `wall` on `cores` cores.
    package mutating func measure(user: Double, system: Double, wall: Duration, cores: Int) {
        userCpuSeconds = user
        systemCpuSeconds = system
        coreSeconds = Double(max(1, cores)) * max(0.001, wall.inSeconds)
        busiestCpuShare = (user + system) / coreSeconds
    }

    /// Adds another shard's measurements.
    package mutating func merge(_ other: ClientLoad) throws(ReportDamage) {
        try schedulingLag.merge(other.schedulingLag)
        userCpuSeconds += other.userCpuSeconds
        systemCpuSeconds += other.systemCpuSeconds
        coreSeconds += other.coreSeconds
        busiestCpuShare = max(busiestCpuShare, other.busiestCpuShare)
    }

    /// Throws when a number read back from a report cannot be a measurement (negative, not finite).
    func check() throws(ReportDamage) {
        for (value, field) in [
            (userCpuSeconds, "user_cpu_seconds"), (systemCpuSeconds, "system_cpu_seconds"),
            (coreSeconds, "core_seconds"), (busiestCpuShare, "busiest_cpu_share"),
        ] {
            _ = try ReportDamage.nonNegative(value, "client." + field)
        }
    }

    /// Derives the shares and the verdict.
    package mutating func finalize(tooManyOpenFiles: Int) {
        cpuShare = coreSeconds > 0 ? (userCpuSeconds + systemCpuSeconds) / coreSeconds : 0
        let lag = schedulingLag
        let p99 = Double(lag.value(atQuantile: 0.99)) / 1000
        schedulingLagMilliseconds = [
            "p99": Rounding.milliseconds(p99), "max": Rounding.milliseconds(Double(lag.max) / 1000),
        ]
        var reasons: [String] = []
        if busiestCpuShare > Self.cpuBound {
            reasons.append(
                String(
                    format: "richpush used %.0f%% of the client's CPU (over %.0f%%)", busiestCpuShare * 100,
                    Self.cpuBound * 100))
        }
        if p99 > Self.lagBoundMilliseconds {
            reasons.append(
                String(
                    format: "devices started up to %.0f ms late at p99 (over %.0f ms), because the client was busy",
                    p99, Self.lagBoundMilliseconds))
        }
        if tooManyOpenFiles > 0 {
            reasons.append("\(tooManyOpenFiles) devices failed because richpush ran out of file descriptors")
        }
        boundReasons = reasons
        bound = !reasons.isEmpty
    }

    /// The plain warning for reports, or nil when the client kept up.
    package var warning: String? {
        guard bound else { return nil }
        return "Client-bound: " + boundReasons.joined(separator: "; ")
            + ". Latency measured on a saturated client is not the CDN's latency: lower \(Setting.concurrency) or the "
            + "arrival rate, or spread the run over machines with \(Setting.shard)."
    }

    /// The CPU time of this process so far (getrusage(RUSAGE_SELF)): user and system seconds.
    package static func processCPUTime() -> (user: Double, system: Double) {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return (0, 0) }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return (seconds(usage.ru_utime), seconds(usage.ru_stime))
    }
}
