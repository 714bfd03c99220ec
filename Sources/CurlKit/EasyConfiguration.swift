import CCurlShim

/// The easy handle's options for one transfer.
extension ActiveTransfer {
    /// Sets every libcurl option of the transfer from its spec, in richpush's words (schemes as a
    /// set, TLS as a minimum minor version); the first option curl refuses ends it with that code.
    func configure(trust: TrustStore?) -> CURLcode {
        let spec = pending.spec
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
        set(CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
        set(CURLOPT_CONNECTTIMEOUT_MS, max(1, min(spec.connectTimeoutMilliseconds, timeoutMilliseconds)))
        if spec.lowSpeedSeconds > 0 {
            set(CURLOPT_LOW_SPEED_LIMIT, spec.lowSpeedLimit)
            set(CURLOPT_LOW_SPEED_TIME, spec.lowSpeedSeconds)
        }
        if let cap = spec.maxBytes, code == CURLE_OK {
            // libcurl compares this with the declared Content-Length, which for an encoded body is the
            // compressed length: an encoded body declared over the cap is refused although it might
            // decode (gzip of incompressible bytes grows by ~0.01%) to just under it. The sink's own
            // count of decoded bytes is the exact check.
            code = rp_easy_setopt_off(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(cap))
        }
        if let trust, code == CURLE_OK { code = rp_easy_use_trust_store(easy, trust.handle, sink) }
        if spec.trace, code == CURLE_OK { code = rp_easy_trace(easy, sink, max(1024, spec.traceLimit)) }
        if let connectTo = connectTo { set(CURLOPT_CONNECT_TO, pointer: UnsafeMutableRawPointer(connectTo)) }
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
        if let headers = headers { set(CURLOPT_HTTPHEADER, pointer: UnsafeMutableRawPointer(headers)) }
        set(CURLOPT_USERAGENT, spec.userAgent)
        if let encodings = spec.acceptEncoding { set(CURLOPT_ACCEPT_ENCODING, encodings) }
        set(CURLOPT_HTTP_VERSION, Int(spec.offersHTTP2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1))
        set(CURLOPT_BUFFERSIZE, spec.receiveBufferBytes)
        set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        set(CURLOPT_PRIVATE, pointer: UnsafeMutableRawPointer(bitPattern: UInt(pending.id)))
        if code == CURLE_OK { code = rp_easy_attach_sink(easy, sink) }
        return code
    }
}
