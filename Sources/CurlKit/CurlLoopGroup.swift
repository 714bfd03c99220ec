import CCurlShim
import Foundation
import POSIXKit
import Synchronization

/// A set of ``CurlLoop`` threads sharing the work: each transfer goes to the least busy loop.
///
/// One loop per core lets TLS handshakes and body writes use every core. Whoever makes a group stops
/// it (``stop()``), which joins every loop.
package final class CurlLoopGroup: Sendable {
    private let loops: [CurlLoop]
    private let nextID = Atomic<UInt64>(1)

    /// The number of loop threads.
    package var loopCount: Int { loops.count }

    /// Starts `loops` loop threads (at least one); throws when libcurl or the loops cannot start.
    package init(loops count: Int = ProcessInfo.processInfo.activeProcessorCount) throws(CurlKitError) {
        var loops: [CurlLoop] = []
        for index in 0..<max(1, count) {
            do throws(CurlKitError) {
                loops.append(try CurlLoop(name: "richpush.curl.\(index)"))
            } catch {
                loops.forEach { $0.stop() }
                throw error
            }
        }
        self.loops = loops
    }

    /// Stops every loop: in-flight transfers end as cancelled, handles are cleaned up, threads joined.
    package func stop() {
        loops.forEach { $0.stop() }
    }

    /// The CA bundle libcurl was built with (Debian: /etc/ssl/certs/ca-certificates.crt), if any.
    package static var systemCABundle: String? { TrustStore.systemBundle }

    /// How many times this process built the certificate store for a trust source (the system bundle,
    /// or `systemCAFile`, plus `caFile`): once at most, however many loops and connections use it.
    package static func trustStoreBuilds(systemCAFile: String?, caFile: String?) -> Int {
        TrustStore.buildCount(CurlLoop.trustSource(systemCAFile: systemCAFile, caFile: caFile))
    }

    /// Runs `body` on loop `index` (modulo the loop count) as its executor, its transfers on that
    /// loop: work that waits on one transfer after another (a bench's concurrency slot) then never
    /// leaves the loop thread between them.
    package func onLoop<T: Sendable>(_ index: Int, _ body: @Sendable () async -> T) async -> T {
        let loop = loops[index % loops.count]
        return await withTaskExecutorPreference(loop) {
            await CurlLoop.$preferred.withValue(loop) { await body() }
        }
    }

    /// Transfers currently submitted and unfinished, over all loops.
    package var inFlight: Int { loops.reduce(0) { $0 + $1.inFlight } }

    /// Runs one transfer, writing the body to `descriptor` (-1 discards it), and returns what libcurl reported.
    ///
    /// Cancelling the calling task aborts the transfer; the outcome then has `cancelled` set.
    /// The descriptor must stay open until this returns.
    @inline(never)
    package func transfer(_ spec: TransferSpec, writingTo descriptor: Int32) async -> TransferOutcome {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let loop =
            CurlLoop.preferred.flatMap { preferred in loops.first { $0 === preferred } }
            ?? loops.min { $0.inFlight < $1.inFlight } ?? loops[0]
        let state = Mutex(SubmitState.idle)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<TransferOutcome, Never>) in
                let pending = CurlLoop.Pending(
                    id: id, spec: spec, descriptor: descriptor, submitted: .now,
                    completion: { continuation.resume(returning: $0) })
                // Submitting under the state lock orders it with the cancellation handler below.
                let cancelledEarly = state.withLock { state -> Bool in
                    if case .cancelled = state { return true }
                    state = .submitted
                    loop.submit(pending)
                    return false
                }
                if cancelledEarly {
                    continuation.resume(returning: .notStarted(.cancelled, diagnostic: "cancelled"))
                }
            }
        } onCancel: {
            let submitted = state.withLock { state -> Bool in
                defer { state = .cancelled }
                if case .submitted = state { return true }
                return false
            }
            if submitted { loop.cancel(id) }
        }
    }

    private enum SubmitState {
        case idle, submitted, cancelled
    }
}

/// Errors CurlKit itself raises (transfer failures are reported in ``TransferOutcome``).
package enum CurlKitError: Error, Sendable, CustomStringConvertible {
    /// libcurl or a loop's event machinery could not be set up; the text says which.
    case initializationFailed(String)
    /// The process has no file descriptor left (EMFILE): `limit` is the soft limit in force, nil
    /// when it cannot be read (``DescriptorBudget/softLimit``).
    case outOfDescriptors(limit: Int?)

    package var description: String {
        switch self {
        case .initializationFailed(let text):
            return text
        case .outOfDescriptors(let limit):
            return "this process has no file descriptor left (the limit is \(DescriptorBudget.text(forLimit: limit))): "
                + "raise it with 'ulimit -n'"
        }
    }
}
