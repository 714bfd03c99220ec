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
public final class CurlLoop: @unchecked Sendable {
    /// A transfer handed to the loop, not started yet.
    struct Pending {
        let id: UInt64
        let spec: TransferSpec
        let descriptor: Int32
        let submitted: ContinuousClock.Instant
        let completion: @Sendable (TransferOutcome) -> Void
    }

    /// A transfer on the multi handle. Touched by the loop thread only.
    private final class Active {
        let pending: Pending
        let easy: UnsafeMutableRawPointer
        let sink: UnsafeMutablePointer<rp_sink>
        let errorBuffer: UnsafeMutablePointer<CChar>
        let connectTo: UnsafeMutablePointer<curl_slist>?
        /// Extra request headers (``TransferSpec/requestHeaders``); freed with the transfer.
        let headers: UnsafeMutablePointer<curl_slist>?
        let queueMicros: Int64
        let timeoutMilliseconds: Int

        init(
            pending: Pending, easy: UnsafeMutableRawPointer, connectTo: UnsafeMutablePointer<curl_slist>?,
            queueMicros: Int64, timeoutMilliseconds: Int
        ) {
            self.pending = pending
            self.easy = easy
            self.connectTo = connectTo
            var headers: UnsafeMutablePointer<curl_slist>?
            for line in pending.spec.requestHeaders { headers = curl_slist_append(headers, line) }
            // A body goes at once: no "Expect: 100-continue" round trip before it.
            if pending.spec.requestBody != nil { headers = curl_slist_append(headers, "Expect:") }
            self.headers = headers
            self.queueMicros = queueMicros
            self.timeoutMilliseconds = timeoutMilliseconds
            sink = .allocate(capacity: 1)
            let spec = pending.spec
            rp_sink_init(
                sink, pending.descriptor, spec.maxBytes ?? -1, max(0, spec.headBytes), Int64(max(0, spec.scanLimit)),
                spec.hashBody ? 1 : 0)
            errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
            errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        }

        deinit {
            rp_sink_release(sink)
            sink.deallocate()
            errorBuffer.deallocate()
            if let connectTo { curl_slist_free_all(connectTo) }
            if let headers { curl_slist_free_all(headers) }
        }
    }

    private let inbox = Mutex(LoopInbox<Pending>())
    private let multi: UnsafeMutableRawPointer
    private let events: OpaquePointer
    private let exited = DispatchSemaphore(value: 0)
    private let load = Atomic<Int>(0)
    // Loop-thread state.
    private var active: [UInt64: Active] = [:]
    private var spareHandles: [UnsafeMutableRawPointer] = []

    /// Transfers submitted and not finished yet.
    public var inFlight: Int { load.load(ordering: .relaxed) }

    /// Creates the multi handle and starts the loop thread.
    ///
    /// Throws when libcurl cannot be initialised, or when the process has no descriptor left for the
    /// loop's epoll and eventfd (the message then names the limit).
    public init(name: String = "richpush.curl") throws(CurlKitError) {
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
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Hands a transfer to the loop; `completion` runs once, on the loop thread, when it ends.
    ///
    /// After ``stop()`` the completion runs at once with an "engine stopped" outcome.
    func submit(_ pending: Pending) {
        load.add(1, ordering: .relaxed)
        let action = inbox.withLock { inbox in
            let action = inbox.submit(pending)
            if action == .queuedWake { rp_loop_wakeup(events) }
            return action
        }
        if action == .rejected {
            load.subtract(1, ordering: .relaxed)
            pending.completion(.notStarted(.engineStopped, diagnostic: "the fetch engine has stopped"))
        }
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
    public func stop() {
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

    private func run() {
        var idle = false
        while true {
            let drain = inbox.withLock { $0.drain(previousPassIdle: idle) }
            for pending in drain.arrived { start(pending) }
            for id in drain.cancelled {
                if let transfer = active[id] { finish(transfer, code: CURLE_ABORTED_BY_CALLBACK, reason: .cancelled) }
            }
            if drain.stopping { break }
            // Only a loop that has declared itself asleep may block; otherwise look without waiting.
            let maySleep = inbox.withLock { $0.maySleep }
            _ = rp_loop_step(events, maySleep ? 1000 : 0)
            var easy: UnsafeMutableRawPointer?
            var result = CURLE_OK
            var finished = 0
            while rp_multi_next_done(multi, &easy, &result) != 0 {
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
        let late = inbox.withLock { inbox in
            let late = inbox.cleanUp()
            rp_loop_destroy(events)
            curl_multi_cleanup(multi)
            return late
        }
        for pending in late {
            load.subtract(1, ordering: .relaxed)
            pending.completion(.notStarted(.engineStopped, diagnostic: "the fetch engine has stopped"))
        }
        exited.signal()
    }

    private static func id(of easy: UnsafeMutableRawPointer) -> UInt64 {
        var pointer: UnsafeMutableRawPointer?
        _ = rp_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &pointer)
        return UInt64(UInt(bitPattern: pointer))
    }

    private func start(_ pending: Pending) {
        let now = ContinuousClock.now
        let queueMicros = (now - pending.submitted).saturatingMicroseconds
        let remaining = (pending.spec.deadline - now).saturatingMilliseconds
        func refuse(_ failure: TransferFailure, _ diagnostic: String) {
            load.subtract(1, ordering: .relaxed)
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
                Self.blamingDescriptorExhaustion(.trustStoreUnreadable(file: error.file, reason: error.reason)),
                "cannot read the certificates in \(error.file): \(error.reason)")
        }
        guard let easy = spareHandles.popLast() ?? curl_easy_init() else {
            return refuse(.other, "curl_easy_init failed (out of memory)")
        }
        var connectTo: UnsafeMutablePointer<curl_slist>?
        for entry in pending.spec.connectTo { connectTo = curl_slist_append(connectTo, entry) }
        let transfer = Active(
            pending: pending, easy: easy, connectTo: connectTo, queueMicros: queueMicros,
            timeoutMilliseconds: Int(min(remaining, Int64(Int32.max))))
        let code = configure(transfer, trust: trust)
        guard code == CURLE_OK, curl_multi_add_handle(multi, easy) == CURLM_OK else {
            curl_easy_reset(easy)
            spareHandles.append(easy)
            return refuse(.other, "libcurl refused the transfer options: \(String(cString: curl_easy_strerror(code)))")
        }
        active[pending.id] = transfer
    }

    /// The process's store for the spec's trust: built on first use, then shared by every connection.
    private func trustStore(for spec: TransferSpec) throws(TrustStore.Failure) -> TrustStore? {
        guard spec.schemes.contains("https") else { return nil }
        return try TrustStore.shared(Self.trustSource(systemCAFile: spec.systemCAFile, caFile: spec.caFile))
    }

    static func trustSource(systemCAFile: String?, caFile: String?) -> TrustStore.Source {
        var files: [String] = []
        if let system = systemCAFile ?? TrustStore.systemBundle, !system.isEmpty { files.append(system) }
        if let caFile { files.append(caFile) }
        return TrustStore.Source(files: files)
    }

    private func configure(_ transfer: Active, trust: TrustStore?) -> CURLcode {
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
        // curl's spelling of the set, only here: "http,https".
        let protocols = spec.schemes.sorted().joined(separator: ",")
        set(CURLOPT_PROTOCOLS_STR, protocols)
        set(CURLOPT_REDIR_PROTOCOLS_STR, protocols)
        set(CURLOPT_FOLLOWLOCATION, spec.followRedirects ? 1 : 0)
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
        if let trust, code == CURLE_OK { code = rp_easy_use_trust_store(easy, trust.handle, transfer.sink) }
        if spec.trace, code == CURLE_OK { code = rp_easy_trace(easy, transfer.sink, max(1024, spec.traceLimit)) }
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
        switch spec.minimumTLSMinor {
        case ...0:
            set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_0))
            set(CURLOPT_SSL_CIPHER_LIST, "DEFAULT@SECLEVEL=0")
        case 1:
            set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_1))
            set(CURLOPT_SSL_CIPHER_LIST, "DEFAULT@SECLEVEL=0")
        case 2:
            set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
        default:
            set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_3))
        }
        set(CURLOPT_NOSIGNAL, 1)
        // No proxy from the environment (http_proxy, ...): the emulated phone talks to the host directly,
        // and libcurl skips the environment look-ups it would otherwise make for every transfer.
        set(CURLOPT_PROXY, "")
        set(CURLOPT_FAILONERROR, spec.failOnHTTPError ? 1 : 0)
        if let body = spec.requestBody, code == CURLE_OK {
            // POSTFIELDSIZE first, so COPYPOSTFIELDS copies exactly that many bytes (a body may hold NUL).
            code = rp_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
            if code == CURLE_OK {
                code =
                    body.isEmpty
                    ? rp_easy_setopt_string(easy, CURLOPT_COPYPOSTFIELDS, "")
                    : body.withUnsafeBytes { bytes in
                        rp_easy_setopt_pointer(
                            easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
                    }
            }
        }
        if spec.method != "GET" && !(spec.method == "POST" && spec.requestBody != nil) {
            set(CURLOPT_CUSTOMREQUEST, spec.method)
        }
        if let headers = transfer.headers { set(CURLOPT_HTTPHEADER, pointer: UnsafeMutableRawPointer(headers)) }
        set(CURLOPT_USERAGENT, spec.userAgent)
        set(CURLOPT_BUFFERSIZE, spec.receiveBufferBytes)
        set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(transfer.errorBuffer))
        set(CURLOPT_PRIVATE, pointer: UnsafeMutableRawPointer(bitPattern: UInt(transfer.pending.id)))
        if code == CURLE_OK { code = rp_easy_attach_sink(easy, transfer.sink) }
        return code
    }

    /// Ends a transfer: `reason` is set when the loop ended it (cancel, stop), `nil` when curl did.
    private func finish(_ transfer: Active, code: CURLcode, reason: TransferFailure?) {
        let easy = transfer.easy
        curl_multi_remove_handle(multi, easy)
        active[transfer.pending.id] = nil
        var outcome = Self.outcome(of: transfer, code: code, reason: reason)
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

    private static func outcome(of transfer: Active, code: CURLcode, reason: TransferFailure?) -> TransferOutcome {
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
        let status = long(CURLINFO_RESPONSE_CODE)
        let redirects = long(CURLINFO_REDIRECT_COUNT)
        var message = String(cString: transfer.errorBuffer)
        if message.isEmpty && code != CURLE_OK { message = String(cString: curl_easy_strerror(code)) }
        let sink = transfer.sink.pointee
        // The redirect look-ups walk the response headers: only the outcomes that read them pay for them.
        let readsRedirect = code == CURLE_UNSUPPORTED_PROTOCOL || (code == CURLE_OK && (300..<400).contains(status))
        let redirectURL = readsRedirect ? string(CURLINFO_REDIRECT_URL) ?? "" : ""
        let classified =
            reason
            ?? TransferClassification.classify(
                TransferFacts(
                    code: code, spec: transfer.pending.spec, status: status, capExceeded: sink.cap_exceeded != 0,
                    writeErrno: sink.write_errno, hopConnected: Int(sink.requests_sent) > redirects,
                    redirectTarget: code == CURLE_UNSUPPORTED_PROTOCOL
                        ? [String(cString: rp_easy_last_header(easy, "Location")), redirectURL, effectiveURL].first {
                            !$0.isEmpty
                        } ?? "" : "",
                    redirectURL: redirectURL, osErrno: code == CURLE_OK ? 0 : long(CURLINFO_OS_ERRNO)))
        let failure = classified.map(Self.blamingDescriptorExhaustion)
        // An error status's body is kept only for a caller that asked to read it (an API's message).
        let keepsBody = classified == nil || (classified == .httpStatus && !transfer.pending.spec.failOnHTTPError)
        var captured: [String: String] = [:]
        for name in transfer.pending.spec.capturedHeaders {
            let value = String(cString: rp_easy_header(easy, name))
            if !value.isEmpty { captured[name] = value }
        }
        let diagnostic =
            switch reason {
            case .cancelled?: "cancelled"
            case .engineStopped?: "the fetch engine has stopped"
            default: code == CURLE_OK ? "" : "curl error \(code.rawValue): \(message)"
            }
        var outcome = TransferOutcome(
            failure: failure,
            diagnostic: diagnostic,
            httpStatus: status,
            effectiveURL: effectiveURL,
            redirectCount: redirects,
            contentType: string(CURLINFO_CONTENT_TYPE),
            contentEncoding: encoding.isEmpty ? nil : encoding,
            contentLength: declaredLength >= 0 ? declaredLength : nil,
            bytes: sink.bytes,
            dnsMicros: off(CURLINFO_NAMELOOKUP_TIME_T),
            connectMicros: off(CURLINFO_CONNECT_TIME_T),
            tlsMicros: off(CURLINFO_APPCONNECT_TIME_T),
            firstByteMicros: off(CURLINFO_STARTTRANSFER_TIME_T),
            totalMicros: off(CURLINFO_TOTAL_TIME_T),
            queueMicros: 0,
            timeoutMilliseconds: transfer.timeoutMilliseconds,
            body: keepsBody ? Self.bodySummary(transfer.sink) : BodySummary(),
            capturedHeaders: captured)
        if failure == .tlsFailed {
            outcome.tls = TLSDiagnosis.of(
                code: code, verifyResult: long(CURLINFO_SSL_VERIFYRESULT), report: sink.tls,
                host: Self.host(of: effectiveURL))
        }
        if transfer.pending.spec.trace {
            var trace =
                sink.trace.bytes.map {
                    TransferTrace(
                        records: UnsafeBufferPointer(start: $0, count: sink.trace.length),
                        truncated: sink.trace.truncated != 0)
                } ?? TransferTrace()
            if sink.trace.bytes == nil { trace.truncated = sink.trace.truncated != 0 }
            trace.remoteAddress = string(CURLINFO_PRIMARY_IP) ?? ""
            trace.remotePort = long(CURLINFO_PRIMARY_PORT)
            trace.localAddress = string(CURLINFO_LOCAL_IP) ?? ""
            trace.localPort = long(CURLINFO_LOCAL_PORT)
            trace.httpVersion =
                switch long(CURLINFO_HTTP_VERSION) {
                case Int(CURL_HTTP_VERSION_1_0): "1.0"
                case Int(CURL_HTTP_VERSION_1_1): "1.1"
                case Int(CURL_HTTP_VERSION_2_0): "2"
                case Int(CURL_HTTP_VERSION_3): "3"
                default: ""
                }
            trace.appendSummary(of: outcome)
            outcome.trace = trace
        }
        return outcome
    }

    /// The host of a URL, without the brackets of an IPv6 literal; nil when it has none.
    static func host(of url: String) -> String? {
        guard var host = URLComponents(string: url)?.host, !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host
    }

    /// Copies what the sink kept, once the transfer succeeded.
    private static func bodySummary(_ sink: UnsafeMutablePointer<rp_sink>) -> BodySummary {
        var summary = BodySummary()
        let kept = sink.pointee
        if let head = kept.head, kept.head_length > 0 {
            summary.head = Array(UnsafeBufferPointer(start: head, count: kept.head_length))
        }
        if kept.tag_end >= 0 {
            summary.tagEnd = Int(kept.tag_end)
            if let after = kept.after_tag {
                summary.afterTag = Array(UnsafeBufferPointer(start: after, count: kept.after_tag_length))
            }
        }
        summary.videoHandler = kept.video_handler != 0
        var digest = [UInt8](repeating: 0, count: 32)
        if rp_sink_digest(sink, &digest) != 0 {
            summary.sha256 = digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }
        return summary
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
