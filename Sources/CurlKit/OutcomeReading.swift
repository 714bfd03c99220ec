import CCurlShim
import Foundation

/// Reading a finished transfer's outcome from its easy handle and sink.
extension ActiveTransfer {
    /// What curl says of the finished transfer, classified (``TransferClassification``): `reason` is
    /// set when the loop ended it (cancel, stop), nil when curl did.
    func outcome(code: CURLcode, reason: TransferFailure?) -> TransferOutcome {
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
        let effectiveURL = string(CURLINFO_EFFECTIVE_URL) ?? pending.spec.url
        let encoding = String(cString: rp_easy_header(easy, "Content-Encoding"))
        let declaredLength = off(CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
        let status = long(CURLINFO_RESPONSE_CODE)
        let redirects = long(CURLINFO_REDIRECT_COUNT)
        var message = String(cString: errorBuffer)
        if message.isEmpty && code != CURLE_OK { message = String(cString: curl_easy_strerror(code)) }
        let sink = sink.pointee
        // The redirect look-ups walk the response headers: only the outcomes that read them pay for them.
        let readsRedirect = code == CURLE_UNSUPPORTED_PROTOCOL || (code == CURLE_OK && (300..<400).contains(status))
        let redirectURL = readsRedirect ? string(CURLINFO_REDIRECT_URL) ?? "" : ""
        let classified =
            reason
            ?? TransferClassification.classify(
                TransferFacts(
                    code: code, spec: pending.spec, status: status, capExceeded: sink.cap_exceeded != 0,
                    writeErrno: sink.write_errno, hopConnected: Int(sink.requests_sent) > redirects,
                    redirectTarget: code == CURLE_UNSUPPORTED_PROTOCOL
                        ? [String(cString: rp_easy_last_header(easy, "Location")), redirectURL, effectiveURL].first {
                            !$0.isEmpty
                        } ?? "" : "",
                    redirectURL: redirectURL, osErrno: code == CURLE_OK ? 0 : long(CURLINFO_OS_ERRNO),
                    message: code == CURLE_OUT_OF_MEMORY ? message : ""))
        let failure = classified.map(CurlLoop.blamingDescriptorExhaustion)
        // An error status's body is kept only for a caller that asked to read it (an API's message).
        let keepsBody = classified == nil || (classified == .httpStatus && !pending.spec.failOnHTTPError)
        var captured: [String: String] = [:]
        for name in pending.spec.capturedHeaders {
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
            timeoutMilliseconds: timeoutMilliseconds,
            body: keepsBody ? bodySummary() : BodySummary(),
            capturedHeaders: captured)
        outcome.wireBytes = off(CURLINFO_SIZE_DOWNLOAD_T)
        outcome.httpVersion = Self.versionName(long(CURLINFO_HTTP_VERSION))
        outcome.connectionsMade = long(CURLINFO_NUM_CONNECTS)
        if failure == .tlsFailed {
            outcome.tls = TLSDiagnosis.of(
                code: code, verifyResult: long(CURLINFO_SSL_VERIFYRESULT), report: sink.tls,
                host: CurlLoop.host(of: effectiveURL))
        }
        if pending.spec.trace {
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
            trace.httpVersion = outcome.httpVersion
            trace.appendSummary(of: outcome)
            outcome.trace = trace
        }
        return outcome
    }

    /// richpush's name for a CURLINFO_HTTP_VERSION value: "1.0", "1.1", "2", "3", "" (no response).
    static func versionName(_ value: Int) -> String {
        switch value {
        case Int(CURL_HTTP_VERSION_1_0): "1.0"
        case Int(CURL_HTTP_VERSION_1_1): "1.1"
        case Int(CURL_HTTP_VERSION_2_0): "2"
        case Int(CURL_HTTP_VERSION_3): "3"
        default: ""
        }
    }

    /// Takes what the sink kept, once the transfer succeeded: its buffers become the summary's, so the
    /// head reaches the sniffer (libmagic) without a copy.
    private func bodySummary() -> BodySummary {
        BodySummary(takingFrom: sink)
    }
}
