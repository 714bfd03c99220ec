import CCurlShim

/// A transfer on the multi handle: its easy handle, the C sink its body goes to, and what curl
/// holds pointers into (the error buffer, the header and connect-to lists) until it ends. Created,
/// used and released by the loop thread only.
final class ActiveTransfer {
    let pending: CurlLoop.Pending
    let easy: UnsafeMutableRawPointer
    let sink: UnsafeMutablePointer<rp_sink>
    let errorBuffer: UnsafeMutablePointer<CChar>
    let connectTo: UnsafeMutablePointer<curl_slist>?
    /// Extra request headers (``TransferSpec/requestHeaders``); freed with the transfer.
    let headers: UnsafeMutablePointer<curl_slist>?
    let queueMicros: Int64
    let timeoutMilliseconds: Int

    init(
        pending: CurlLoop.Pending, easy: UnsafeMutableRawPointer, connectTo: UnsafeMutablePointer<curl_slist>?,
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
