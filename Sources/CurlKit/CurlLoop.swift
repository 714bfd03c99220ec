import CCurlShim
import Dispatch
import Foundation
import Synchronization

/// One thread running libcurl's multi loop; it owns its multi handle and every easy handle on it.
///
/// Other threads never touch a curl handle: they put transfers and cancellations in a
/// lock-guarded inbox and wake the loop through an eventfd when it sleeps. The loop starts what
/// arrived, waits on epoll for the sockets curl asked it to watch (curl's socket interface, so curl
/// acts on exactly the sockets that are ready instead of polling each one), and drains finished
/// transfers.
///
/// - Warning: call ``stop()`` before the process exits. It cancels what is in flight, cleans up
///   every handle and joins the thread, so no curl handle outlives `main`.
public final class CurlLoop: @unchecked Sendable {
    /// A transfer handed to the loop, not started yet.
    struct Pending {
        let id: UInt64
        let spec: TransferSpec
        let descriptor: Int32
        let submitted: ContinuousClock.Instant
        let completion: @Sendable (TransferOutcome) -> Void
    }

    private struct Inbox {
        var pending: [Pending] = []
        var cancelled: [UInt64] = []
        var stopping = false
        /// The loop is about to wait, or waiting, for events: a submitter must wake it.
        var sleeping = false
        /// stop() has released the multi handle and the event loop.
        var cleanedUp = false
    }

    /// A transfer on the multi handle. Touched by the loop thread only.
    private final class Active {
        let pending: Pending
        let easy: UnsafeMutableRawPointer
        let sink: UnsafeMutablePointer<rp_sink>
        let errorBuffer: UnsafeMutablePointer<CChar>
        let connectTo: UnsafeMutablePointer<curl_slist>?
        let queueMicros: Int64
        let timeoutMilliseconds: Int

        init(
            pending: Pending, easy: UnsafeMutableRawPointer, connectTo: UnsafeMutablePointer<curl_slist>?,
            queueMicros: Int64, timeoutMilliseconds: Int
        ) {
            self.pending = pending
            self.easy = easy
            self.connectTo = connectTo
            self.queueMicros = queueMicros
            self.timeoutMilliseconds = timeoutMilliseconds
            sink = .allocate(capacity: 1)
            sink.initialize(
                to: rp_sink(
                    fd: pending.descriptor, cap: pending.spec.maxBytes ?? -1, bytes: 0, cap_exceeded: 0,
                    write_errno: 0))
            errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
            errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        }

        deinit {
            sink.deallocate()
            errorBuffer.deallocate()
            if let connectTo { curl_slist_free_all(connectTo) }
        }
    }

    private let inbox = Mutex(Inbox())
    private let multi: UnsafeMutableRawPointer
    private let events: OpaquePointer
    private let exited = DispatchSemaphore(value: 0)
    private let load = Atomic<Int>(0)
    // Loop-thread state.
    private var active: [UInt64: Active] = [:]
    private var spareHandles: [UnsafeMutableRawPointer] = []

    /// Transfers submitted and not finished yet.
    public var inFlight: Int { load.load(ordering: .relaxed) }

    /// Creates the multi handle and starts the loop thread; `nil` when libcurl cannot be initialised.
    public init?(name: String = "richpush.curl") {
        guard CurlRuntime.ensureInitialized(), let multi = curl_multi_init() else { return nil }
        guard let events = rp_loop_create(multi) else {
            curl_multi_cleanup(multi)
            return nil
        }
        self.multi = multi
        self.events = events
        // Connections a transfer is allowed to keep are held per loop; keep enough for wide reuse runs.
        _ = rp_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, 1024)
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Hands a transfer to the loop; `completion` runs once, on the loop thread, when it ends.
    ///
    /// After ``stop()`` the completion runs at once with an "engine stopped" outcome.
    func submit(_ pending: Pending) {
        load.add(1, ordering: .relaxed)
        let (accepted, wake) = inbox.withLock { inbox -> (Bool, Bool) in
            guard !inbox.stopping else { return (false, false) }
            inbox.pending.append(pending)
            defer { inbox.sleeping = false }
            return (true, inbox.sleeping)
        }
        if wake { rp_loop_wakeup(events) }
        if !accepted {
            load.subtract(1, ordering: .relaxed)
            pending.completion(
                .notStarted(curlCode: Int(CURLE_ABORTED_BY_CALLBACK.rawValue), message: "the fetch engine has stopped"))
        }
    }

    /// Asks the loop to abort a transfer; it completes with `cancelled` set. Unknown ids are ignored.
    func cancel(_ id: UInt64) {
        let wake = inbox.withLock { inbox -> Bool in
            guard !inbox.stopping else { return false }
            inbox.cancelled.append(id)
            defer { inbox.sleeping = false }
            return inbox.sleeping
        }
        if wake { rp_loop_wakeup(events) }
    }

    /// Ends every transfer (as stopped), cleans up every curl handle and joins the loop thread.
    ///
    /// Idempotent, and safe to call from several threads at once: every caller returns only after
    /// the cleanup is done.
    public func stop() {
        let first = inbox.withLock { inbox -> Bool in
            defer { inbox.stopping = true }
            return !inbox.stopping
        }
        if first { rp_loop_wakeup(events) }
        // The semaphore is signalled once by the exiting thread; each caller passes it on.
        exited.wait()
        defer { exited.signal() }
        let cleanUp = inbox.withLock { inbox -> Bool in
            defer { inbox.cleanedUp = true }
            return !inbox.cleanedUp
        }
        guard cleanUp else { return }
        // The event loop first: destroying it unhooks its callbacks from the multi handle.
        rp_loop_destroy(events)
        curl_multi_cleanup(multi)
    }

    private func run() {
        var idle = false
        while true {
            // Take the inbox; when it is empty after a pass that finished nothing, say the loop sleeps
            // so the next submitter wakes it (both under the lock: no wakeup is lost).
            let (arrived, cancelled, stopping) = inbox.withLock { inbox in
                defer {
                    inbox.pending.removeAll(keepingCapacity: true)
                    inbox.cancelled.removeAll(keepingCapacity: true)
                    inbox.sleeping = idle && inbox.pending.isEmpty && inbox.cancelled.isEmpty
                }
                return (inbox.pending, inbox.cancelled, inbox.stopping)
            }
            for pending in arrived { start(pending) }
            for id in cancelled {
                if let transfer = active[id] { finish(transfer, code: CURLE_ABORTED_BY_CALLBACK, cancelled: true) }
            }
            if stopping { break }
            // Only a loop that has declared itself asleep may block; otherwise look without waiting.
            let sleeping = inbox.withLock { $0.sleeping }
            _ = rp_loop_step(events, sleeping ? 1000 : 0)
            var easy: UnsafeMutableRawPointer?
            var result = CURLE_OK
            var finished = 0
            while rp_multi_next_done(multi, &easy, &result) != 0 {
                guard let easy, let transfer = active[Self.id(of: easy)] else { continue }
                finish(transfer, code: result, cancelled: false)
                finished += 1
            }
            idle = arrived.isEmpty && cancelled.isEmpty && finished == 0
        }
        for transfer in Array(active.values) { finish(transfer, code: CURLE_ABORTED_BY_CALLBACK, cancelled: false) }
        // Anything submitted after the last drain but before `stopping` was seen.
        let late = inbox.withLock { inbox in
            defer { inbox.pending.removeAll() }
            return inbox.pending
        }
        for pending in late {
            load.subtract(1, ordering: .relaxed)
            pending.completion(
                .notStarted(curlCode: Int(CURLE_ABORTED_BY_CALLBACK.rawValue), message: "the fetch engine has stopped"))
        }
        for easy in spareHandles { curl_easy_cleanup(easy) }
        spareHandles.removeAll()
        exited.signal()
    }

    private static func id(of easy: UnsafeMutableRawPointer) -> UInt64 {
        var pointer: UnsafeMutableRawPointer?
        _ = rp_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &pointer)
        return UInt64(UInt(bitPattern: pointer))
    }

    private func start(_ pending: Pending) {
        let now = ContinuousClock.now
        let queueMicros = Self.micros(now - pending.submitted)
        let remaining = Self.milliseconds(pending.spec.deadline - now)
        guard remaining > 0 else {
            load.subtract(1, ordering: .relaxed)
            var outcome = TransferOutcome.notStarted(
                curlCode: Int(CURLE_OPERATION_TIMEDOUT.rawValue),
                message: "the deadline passed before the transfer started")
            outcome.queueMicros = queueMicros
            pending.completion(outcome)
            return
        }
        guard let easy = spareHandles.popLast() ?? curl_easy_init() else {
            load.subtract(1, ordering: .relaxed)
            pending.completion(
                .notStarted(curlCode: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "curl_easy_init failed"))
            return
        }
        var connectTo: UnsafeMutablePointer<curl_slist>?
        for entry in pending.spec.connectTo { connectTo = curl_slist_append(connectTo, entry) }
        let transfer = Active(
            pending: pending, easy: easy, connectTo: connectTo, queueMicros: queueMicros,
            timeoutMilliseconds: remaining)
        let code = configure(transfer)
        guard code == CURLE_OK, curl_multi_add_handle(multi, easy) == CURLM_OK else {
            load.subtract(1, ordering: .relaxed)
            curl_easy_reset(easy)
            spareHandles.append(easy)
            pending.completion(
                .notStarted(
                    curlCode: Int(code == CURLE_OK ? CURLE_FAILED_INIT.rawValue : code.rawValue),
                    message: "libcurl refused the transfer options: \(String(cString: curl_easy_strerror(code)))"))
            return
        }
        active[pending.id] = transfer
    }

    private func configure(_ transfer: Active) -> CURLcode {
        let spec = transfer.pending.spec
        let easy = transfer.easy
        var code = CURLE_OK
        func set(_ option: CURLoption, _ value: Int) {
            if code == CURLE_OK { code = rp_easy_setopt_long(easy, option, value) }
        }
        func set(_ option: CURLoption, _ value: String) {
            if code == CURLE_OK { code = rp_easy_setopt_string(easy, option, value) }
        }
        func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) {
            if code == CURLE_OK { code = rp_easy_setopt_pointer(easy, option, value) }
        }
        set(CURLOPT_URL, spec.url)
        set(CURLOPT_PROTOCOLS_STR, spec.allowedProtocols)
        set(CURLOPT_REDIR_PROTOCOLS_STR, spec.allowedProtocols)
        set(CURLOPT_FOLLOWLOCATION, 1)
        set(CURLOPT_MAXREDIRS, spec.maxRedirects)
        set(CURLOPT_TIMEOUT_MS, transfer.timeoutMilliseconds)
        set(CURLOPT_CONNECTTIMEOUT_MS, max(1, min(spec.connectTimeoutMilliseconds, transfer.timeoutMilliseconds)))
        if spec.lowSpeedSeconds > 0 {
            set(CURLOPT_LOW_SPEED_LIMIT, spec.lowSpeedLimit)
            set(CURLOPT_LOW_SPEED_TIME, spec.lowSpeedSeconds)
        }
        if let cap = spec.maxBytes, code == CURLE_OK {
            code = rp_easy_setopt_off(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(cap))
        }
        if let caFile = spec.caFile { set(CURLOPT_CAINFO, caFile) }
        if let connectTo = transfer.connectTo { set(CURLOPT_CONNECT_TO, pointer: UnsafeMutableRawPointer(connectTo)) }
        if spec.freshConnection {
            // A phone of its own: no connection, TLS session or DNS answer shared with other transfers.
            set(CURLOPT_DNS_CACHE_TIMEOUT, 0)
            set(CURLOPT_FRESH_CONNECT, 1)
            set(CURLOPT_FORBID_REUSE, 1)
            set(CURLOPT_SSL_SESSIONID_CACHE, 0)
        }
        set(CURLOPT_SSL_VERIFYPEER, 1)
        set(CURLOPT_SSL_VERIFYHOST, 2)
        if spec.requireTLS12 { set(CURLOPT_SSLVERSION, CURL_SSLVERSION_TLSv1_2) }
        set(CURLOPT_NOSIGNAL, 1)
        // No proxy from the environment (http_proxy, ...): the emulated phone talks to the host directly,
        // and libcurl skips the environment look-ups it would otherwise make for every transfer.
        set(CURLOPT_PROXY, "")
        set(CURLOPT_FAILONERROR, 1)
        set(CURLOPT_USERAGENT, spec.userAgent)
        set(CURLOPT_BUFFERSIZE, spec.receiveBufferBytes)
        set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(transfer.errorBuffer))
        set(CURLOPT_PRIVATE, pointer: UnsafeMutableRawPointer(bitPattern: UInt(transfer.pending.id)))
        if code == CURLE_OK { code = rp_easy_attach_sink(easy, transfer.sink) }
        return code
    }

    private func finish(_ transfer: Active, code: CURLcode, cancelled: Bool) {
        let easy = transfer.easy
        curl_multi_remove_handle(multi, easy)
        active[transfer.pending.id] = nil
        var outcome = Self.outcome(of: transfer, code: code, cancelled: cancelled)
        outcome.queueMicros = transfer.queueMicros
        curl_easy_reset(easy)
        if spareHandles.count < 256 {
            spareHandles.append(easy)
        } else {
            curl_easy_cleanup(easy)
        }
        load.subtract(1, ordering: .relaxed)
        transfer.pending.completion(outcome)
    }

    private static func outcome(of transfer: Active, code: CURLcode, cancelled: Bool) -> TransferOutcome {
        let easy = transfer.easy
        func long(_ info: CURLINFO) -> Int {
            var value = 0
            _ = rp_easy_getinfo_long(easy, info, &value)
            return value
        }
        func off(_ info: CURLINFO) -> Int64 {
            var value: curl_off_t = 0
            _ = rp_easy_getinfo_off(easy, info, &value)
            return Int64(value)
        }
        func string(_ info: CURLINFO) -> String? {
            var value: UnsafePointer<CChar>?
            guard rp_easy_getinfo_string(easy, info, &value) == CURLE_OK, let value else { return nil }
            return String(cString: value)
        }
        let effectiveURL = string(CURLINFO_EFFECTIVE_URL) ?? transfer.pending.spec.url
        let encoding = String(cString: rp_easy_header(easy, "Content-Encoding"))
        let declaredLength = off(CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
        let connect = off(CURLINFO_CONNECT_TIME_T)
        let tls = off(CURLINFO_APPCONNECT_TIME_T)
        var message = String(cString: transfer.errorBuffer)
        if message.isEmpty && code != CURLE_OK { message = String(cString: curl_easy_strerror(code)) }
        if cancelled { message = "cancelled" }
        return TransferOutcome(
            curlCode: Int(code.rawValue),
            curlMessage: message,
            httpStatus: long(CURLINFO_RESPONSE_CODE),
            effectiveURL: effectiveURL,
            redirectCount: long(CURLINFO_REDIRECT_COUNT),
            contentType: string(CURLINFO_CONTENT_TYPE),
            contentEncoding: encoding.isEmpty ? nil : encoding,
            contentLength: declaredLength >= 0 ? declaredLength : nil,
            bytes: transfer.sink.pointee.bytes,
            capExceeded: transfer.sink.pointee.cap_exceeded != 0,
            writeErrno: transfer.sink.pointee.write_errno,
            cancelled: cancelled,
            dnsMicros: off(CURLINFO_NAMELOOKUP_TIME_T),
            connectMicros: connect,
            tlsMicros: tls,
            firstByteMicros: off(CURLINFO_STARTTRANSFER_TIME_T),
            totalMicros: off(CURLINFO_TOTAL_TIME_T),
            queueMicros: 0,
            timeoutMilliseconds: transfer.timeoutMilliseconds)
    }

    static func micros(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(micros(duration) / 1000)
    }
}
