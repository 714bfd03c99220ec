import CCurlShim
import Dispatch
import Foundation
import POSIXKit
import Synchronization

/// One thread running libcurl's multi loop; it owns its multi handle and every easy handle on it.
///
/// Other threads never touch a curl handle: they put transfers and cancellations in a
/// lock-guarded inbox (``LoopInbox``, which decides what each call does) and wake the loop through an
/// eventfd when it sleeps. The wake-up is written under the inbox lock, and the loop thread releases
/// the event loop under the same lock when it exits, so a late submit or cancel can never write to a
/// freed loop or a closed (possibly reused) descriptor. The loop starts what
/// arrived, waits on epoll for the sockets curl asked it to watch (curl's socket interface, so curl
/// acts on exactly the sockets that are ready instead of polling each one), and drains finished
/// transfers.
///
/// - Warning: call ``stop()`` before the process exits. It cancels what is in flight, cleans up
///   every handle and joins the thread, so no curl handle outlives `main`. The thread keeps the
///   loop alive until then, so `deinit` runs only after the clean-up.
///
/// This class is the Sendable façade; the loop thread's state (the transfers, the spare handles)
/// is a ``LoopThread``, which only that thread ever sees. The façade is Sendable by hand: besides
/// its Mutex and Atomic it holds the multi handle and the C loop, which only the loop thread uses,
/// except the wake-ups written under the inbox lock.
package final class CurlLoop: @unchecked Sendable {
    /// A transfer handed to the loop, not started yet.
    struct Pending {
        let id: UInt64
        let spec: TransferSpec
        let descriptor: Int32
        let submitted: ContinuousClock.Instant
        let completion: @Sendable (TransferOutcome) -> Void
    }

    /// What reaches the loop thread through its inbox: a transfer to start, or a job of a task that
    /// prefers this loop as its executor (``enqueue(_:)``), to run between passes.
    enum Arrival {
        case transfer(Pending)
        case job(UnownedJob)
    }

    let inbox = Mutex(LoopInbox<Arrival>())

    /// The loop a task runs on when it chose one (``CurlLoopGroup/onLoop(_:_:)``): its transfers go to
    /// this loop, so their completions resume the task where it already runs.
    @TaskLocal static var preferred: CurlLoop?
    let multi: UnsafeMutableRawPointer
    let events: OpaquePointer
    let exited = DispatchSemaphore(value: 0)
    let load = Atomic<Int>(0)

    /// Moves the loop-thread state to the thread that runs it: filled here, emptied there, once.
    private final class HandOff: @unchecked Sendable {
        var thread: LoopThread?
    }

    /// Transfers submitted and not finished yet.
    package var inFlight: Int { load.load(ordering: .relaxed) }

    /// Creates the multi handle and starts the loop thread.
    ///
    /// Throws when libcurl cannot be initialised, or when the process has no descriptor left for the
    /// loop's epoll and eventfd (the message then names the limit).
    package init(name: String = "richpush.curl") throws(CurlKitError) {
        guard CurlRuntime.ensureInitialized(), let multi = curl_multi_init() else {
            throw .initializationFailed("libcurl could not be initialised (curl_global_init or curl_multi_init failed)")
        }
        guard let events = rp_loop_create(multi) else {
            let code = errno
            curl_multi_cleanup(multi)
            if code == EMFILE || code == ENFILE { throw .outOfDescriptors(limit: DescriptorBudget.softLimit) }
            throw .initializationFailed(
                "cannot create the fetch loop's epoll and eventfd: \(SystemError.words(for: code))")
        }
        self.multi = multi
        self.events = events
        // Connections a transfer is allowed to keep are held per loop; keep enough for wide reuse runs.
        _ = rp_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, 1024)
        let handOff = HandOff()
        handOff.thread = LoopThread(façade: self)
        let thread = Thread {
            guard let owner = handOff.thread else { return }
            handOff.thread = nil
            // The thread's own name (what ps, top and perf show, at most 15 bytes), which a thread
            // inherits from the one that made it otherwise.
            rp_name_this_thread(name)
            owner.run()
        }
        thread.name = name
        thread.start()
    }

    /// Hands a transfer to the loop; `completion` runs once, on the loop thread, when it ends.
    ///
    /// After ``stop()`` the completion runs at once with an "engine stopped" outcome.
    func submit(_ pending: Pending) {
        load.add(1, ordering: .relaxed)
        let action = inbox.withLock { inbox in
            let action = inbox.submit(.transfer(pending))
            if action == .queuedWake { rp_loop_wakeup(events) }
            return action
        }
        if action == .rejected {
            load.subtract(1, ordering: .relaxed)
            pending.completion(.notStarted(.engineStopped, diagnostic: "the fetch engine has stopped"))
        }
    }

    /// Runs `job` on the loop thread, between its passes; after ``stop()``, on the global executor.
    func run(_ job: UnownedJob) {
        let action = inbox.withLock { inbox in
            let action = inbox.submit(.job(job))
            if action == .queuedWake { rp_loop_wakeup(events) }
            return action
        }
        if action == .rejected { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }

    /// Asks the loop to abort a transfer; it completes as cancelled. Unknown ids are ignored.
    func cancel(_ id: UInt64) {
        inbox.withLock { inbox in
            if inbox.cancel(id) { rp_loop_wakeup(events) }
        }
    }

    /// Ends every transfer (as stopped), cleans up every curl handle and joins the loop thread.
    ///
    /// Idempotent, and safe to call from several threads at once: every caller returns only after
    /// the cleanup is done.
    package func stop() {
        inbox.withLock { inbox in
            if inbox.stop() { rp_loop_wakeup(events) }
        }
        // The semaphore is signalled once by the exiting thread; each caller passes it on.
        exited.wait()
        exited.signal()
    }

    deinit {
        // The loop thread holds the loop until it has cleaned up; reaching here earlier is a bug.
        assert(inbox.withLock { $0.phase } == .cleanedUp, "a CurlLoop was released without stop()")
    }

    static func trustSource(systemCAFile: String?, caFile: String?) -> TrustStore.Source {
        var files: [String] = []
        if let system = systemCAFile ?? TrustStore.systemBundle, !system.isEmpty { files.append(system) }
        if let caFile { files.append(caFile) }
        return TrustStore.Source(files: files)
    }

    /// The host of a URL, without the brackets of an IPv6 literal; nil when it has none.
    static func host(of url: String) -> String? {
        guard var host = URLComponents(string: url)?.host, !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host
    }

    /// A resolver, connect or TLS failure while this process cannot open one more descriptor is the
    /// client's (libcurl reports EMFILE only for the socket itself; the resolver and the trust store
    /// fail with their own codes when /etc/hosts or a CA file cannot be opened).
    static func blamingDescriptorExhaustion(_ failure: TransferFailure) -> TransferFailure {
        switch failure {
        case .dnsFailed, .connectFailed, .tlsFailed, .trustStoreUnreadable, .other:
            let probe = dup(2)
            if probe >= 0 {
                close(probe)
                return failure
            }
            return errno == EMFILE || errno == ENFILE ? .outOfDescriptors : failure
        default:
            return failure
        }
    }
}

/// A loop is also an executor: a task that prefers it (``CurlLoopGroup/onLoop(_:_:)``) runs on the
/// loop thread, so a transfer's completion continues the task there, with no wake-up of another
/// thread and no hop back: a bench device's verdict and its next download start where its last
/// transfer ended. Jobs run between the loop's passes; what blocks goes to the blocking pool as
/// everywhere else.
extension CurlLoop: TaskExecutor {
    package func enqueue(_ job: consuming ExecutorJob) {
        run(UnownedJob(job))
    }
}
