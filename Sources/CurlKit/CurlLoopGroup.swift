import CCurlShim
import Foundation
import Synchronization

/// A set of ``CurlLoop`` threads sharing the work: each transfer goes to the least busy loop.
///
/// One loop per core lets TLS handshakes and body writes use every core. The group's lifetime is
/// scoped: ``withGroup(loops:_:)`` stops and joins every loop before it returns.
public final class CurlLoopGroup: Sendable {
    private let loops: [CurlLoop]
    private let nextID = Atomic<UInt64>(1)

    /// The number of loop threads.
    public var loopCount: Int { loops.count }

    /// Starts `loops` loop threads (at least one); `nil` when libcurl cannot be initialised.
    public init?(loops count: Int = ProcessInfo.processInfo.activeProcessorCount) {
        var loops: [CurlLoop] = []
        for index in 0..<max(1, count) {
            guard let loop = CurlLoop(name: "richpush.curl.\(index)") else {
                loops.forEach { $0.stop() }
                return nil
            }
            loops.append(loop)
        }
        self.loops = loops
    }

    /// Runs `body` with a new group and stops the group when `body` returns or throws.
    public static func withGroup<Result>(
        loops: Int = ProcessInfo.processInfo.activeProcessorCount,
        _ body: (CurlLoopGroup) async throws -> Result
    ) async throws -> Result {
        guard let group = CurlLoopGroup(loops: loops) else { throw CurlKitError.initializationFailed }
        defer { group.stop() }
        return try await body(group)
    }

    /// Stops every loop: in-flight transfers end as cancelled, handles are cleaned up, threads joined.
    public func stop() {
        loops.forEach { $0.stop() }
    }

    /// Transfers currently submitted and unfinished, over all loops.
    public var inFlight: Int { loops.reduce(0) { $0 + $1.inFlight } }

    /// Runs one transfer, writing the body to `descriptor` (-1 discards it), and returns what libcurl reported.
    ///
    /// Cancelling the calling task aborts the transfer; the outcome then has `cancelled` set.
    /// The descriptor must stay open until this returns.
    public func transfer(_ spec: TransferSpec, writingTo descriptor: Int32) async -> TransferOutcome {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let loop = loops.min { $0.inFlight < $1.inFlight } ?? loops[0]
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
                    continuation.resume(
                        returning: .notStarted(
                            curlCode: Int(CURLE_ABORTED_BY_CALLBACK.rawValue), message: "cancelled", cancelled: true))
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
public enum CurlKitError: Error, Sendable {
    /// `curl_global_init` or `curl_multi_init` failed.
    case initializationFailed
}
