import CCurlShim
import Foundation

/// The loop thread's side of a ``CurlLoop``: the transfers on the multi handle and the spare easy
/// handles. Not Sendable: it is created with the loop, handed to the loop thread once and used
/// there only; other threads reach the loop through the façade's inbox alone.
final class LoopThread {
    /// The façade: its inbox, counters and the C loop it owns.
    private let façade: CurlLoop
    private var active: [UInt64: ActiveTransfer] = [:]
    /// Easy handles kept for reuse (`curl_easy_reset` keeps their connection and DNS caches).
    private var spareHandles: [UnsafeMutableRawPointer] = []

    init(façade: CurlLoop) {
        self.façade = façade
    }

    /// The loop: start what arrived, end what was cancelled, let curl act on ready sockets and
    /// timers, finish what curl finished; on stop, end everything and release every handle.
    func run() {
        var idle = false
        while true {
            // One lock a pass: whether the loop may block is read with the drain. A transfer submitted
            // after it finds the loop asleep and writes the wake-up, so the wait returns at once.
            let (drain, maySleep) = façade.inbox.withLock { inbox in
                let drain = inbox.drain(previousPassIdle: idle)
                return (drain, inbox.maySleep)
            }
            for arrival in drain.arrived {
                switch arrival {
                case .transfer(let pending): start(pending)
                case .job(let job): job.runSynchronously(on: façade.asUnownedTaskExecutor())
                }
            }
            for id in drain.cancelled {
                if let transfer = active[id] { finish(transfer, code: CURLE_ABORTED_BY_CALLBACK, reason: .cancelled) }
            }
            if drain.stopping { break }
            // Only a loop that has declared itself asleep may block; otherwise look without waiting.
            _ = rp_loop_step(façade.events, maySleep ? 1000 : 0)
            var easy: UnsafeMutableRawPointer?
            var result = CURLE_OK
            var finished = 0
            while rp_multi_next_done(façade.multi, &easy, &result) != 0 {
                guard let easy, let transfer = active[Self.id(of: easy)] else { continue }
                finish(transfer, code: result, reason: nil)
                finished += 1
            }
            idle = drain.arrived.isEmpty && drain.cancelled.isEmpty && finished == 0
        }
        for transfer in Array(active.values) {
            finish(transfer, code: CURLE_ABORTED_BY_CALLBACK, reason: .engineStopped)
        }
        for easy in spareHandles { curl_easy_cleanup(easy) }
        spareHandles.removeAll()
        // Released under the lock that every wake-up is written under: nothing can touch them after.
        let late = façade.inbox.withLock { inbox in
            let late = inbox.cleanUp()
            rp_loop_destroy(façade.events)
            curl_multi_cleanup(façade.multi)
            return late
        }
        for arrival in late {
            switch arrival {
            case .transfer(let pending):
                façade.load.subtract(1, ordering: .relaxed)
                pending.completion(.notStarted(.engineStopped, diagnostic: "the fetch engine has stopped"))
            case .job(let job):
                globalConcurrentExecutor.enqueue(ExecutorJob(job))
            }
        }
        façade.exited.signal()
    }

    private static func id(of easy: UnsafeMutableRawPointer) -> UInt64 {
        var pointer: UnsafeMutableRawPointer?
        _ = rp_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &pointer)
        return UInt64(UInt(bitPattern: pointer))
    }

    private func start(_ pending: CurlLoop.Pending) {
        let now = ContinuousClock.now
        let queueMicros = (now - pending.submitted).saturatingMicroseconds
        let remaining = (pending.spec.deadline - now).saturatingMilliseconds
        func refuse(_ failure: TransferFailure, _ diagnostic: String) {
            façade.load.subtract(1, ordering: .relaxed)
            var outcome = TransferOutcome.notStarted(failure, diagnostic: diagnostic)
            outcome.queueMicros = queueMicros
            pending.completion(outcome)
        }
        guard remaining > 0 else {
            return refuse(.deadlineExceeded, "the deadline passed before the transfer started")
        }
        var trust: TrustStore?
        do throws(TrustStore.Failure) {
            trust = try trustStore(for: pending.spec)
        } catch {
            return refuse(
                CurlLoop.blamingDescriptorExhaustion(.trustStoreUnreadable(file: error.file, reason: error.reason)),
                "cannot read the certificates in \(error.file): \(error.reason)")
        }
        let spare = spareHandles.popLast()
        guard var easy = spare ?? curl_easy_init() else {
            return refuse(.other, "curl_easy_init failed (out of memory)")
        }
        func prepare(_ easy: UnsafeMutableRawPointer) -> (ActiveTransfer, CURLcode) {
            var connectTo: UnsafeMutablePointer<curl_slist>?
            for entry in pending.spec.connectTo { connectTo = curl_slist_append(connectTo, entry) }
            let transfer = ActiveTransfer(
                pending: pending, easy: easy, connectTo: connectTo, queueMicros: queueMicros,
                timeoutMilliseconds: Int(min(remaining, Int64(Int32.max))))
            return (transfer, transfer.configure(trust: trust))
        }
        var (transfer, code) = prepare(easy)
        if code != CURLE_OK, spare != nil, let fresh = curl_easy_init() {
            // libcurl 7.88 refuses CURLOPT_BUFFERSIZE (CURLE_BAD_FUNCTION_ARGUMENT) on a handle that still
            // holds an earlier transfer's receive buffer, as a spare does after an HTTP/2 transfer on a shared
            // connection (a third of a --reuse batch against nginx failed so): a new handle takes the options.
            curl_easy_cleanup(easy)
            easy = fresh
            (transfer, code) = prepare(easy)
        }
        guard code == CURLE_OK, curl_multi_add_handle(façade.multi, easy) == CURLM_OK else {
            curl_easy_reset(easy)
            spareHandles.append(easy)
            return refuse(.other, "libcurl refused the transfer options: \(String(cString: curl_easy_strerror(code)))")
        }
        active[pending.id] = transfer
    }

    /// The process's store for the spec's trust, shared by every connection: read now for an https
    /// URL (an unreadable file refuses the transfer, naming it), or in the handshake for an http URL
    /// that curl redirects to https (most http transfers never read it).
    private func trustStore(for spec: TransferSpec) throws(TrustStore.Failure) -> TrustStore? {
        guard spec.schemes.contains("https") else { return nil }
        let source = CurlLoop.trustSource(systemCAFile: spec.systemCAFile, caFile: spec.caFile)
        guard let store = TrustStore.shared(source) else {
            throw TrustStore.Failure(file: source.files.joined(separator: ", "), reason: "out of memory")
        }
        if Self.isHTTPS(spec.url) { try store.ensureBuilt() }
        return store
    }

    /// Whether `url` starts with `https:` in any case.
    static func isHTTPS(_ url: String) -> Bool {
        let scheme = url.utf8.prefix(6)
        return scheme.count == 6 && zip(scheme, "https:".utf8).allSatisfy { $0 | 0x20 == $1 | 0x20 }
    }

    /// Ends a transfer: `reason` is set when the loop ended it (cancel, stop), `nil` when curl did.
    private func finish(_ transfer: ActiveTransfer, code: CURLcode, reason: TransferFailure?) {
        let easy = transfer.easy
        curl_multi_remove_handle(façade.multi, easy)
        active[transfer.pending.id] = nil
        var outcome = transfer.outcome(code: code, reason: reason)
        outcome.queueMicros = transfer.queueMicros
        curl_easy_reset(easy)
        if spareHandles.count < 256 {
            spareHandles.append(easy)
        } else {
            curl_easy_cleanup(easy)
        }
        façade.load.subtract(1, ordering: .relaxed)
        transfer.pending.completion(outcome)
    }
}
