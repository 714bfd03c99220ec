import CurlKit
import Foundation
import POSIXKit
import Synchronization

/// Downloads assets the way a service extension must: under a deadline, streamed to disk, capped.
///
/// The engine owns a ``CurlLoopGroup``: one loop thread per core by default, each running
/// libcurl's multi loop over its own handles. Any number of tasks may call ``fetch(_:writingTo:)``
/// at once; each call is one transfer. Cancelling the calling task aborts its transfer. A request
/// whose policy names a ``NetworkProfile`` connects through the engine's shaping relay for that
/// profile, started on first use and stopped with the engine.
///
/// ```swift
/// let engine = try FetchEngine()
/// defer { engine.shutdown() }
/// let request = FetchRequest(url: "https://cdn.example.com/hero.jpg", budget: .seconds(30))
/// let result = try await engine.fetch(request, toNewFileAt: "/tmp/out/hero.part")
/// print(result.bytes, result.timings.total)
/// ```
package final class FetchEngine: Sendable {
    let group: CurlLoopGroup
    /// One shaping relay per network profile in use; nil once the engine has shut down.
    private let relays = Mutex<[NetworkProfile: NetworkRelay]?>([:])

    /// The number of loop threads.
    package var loopCount: Int { group.loopCount }
    /// Transfers in flight over all loops.
    package var inFlight: Int { group.inFlight }

    /// Runs `body` on fetch loop `index` (modulo ``loopCount``), its downloads on that loop: see
    /// ``CurlLoopGroup/onLoop(_:_:)``.
    package func onLoop<T: Sendable>(_ index: Int, _ body: @Sendable () async -> T) async -> T {
        await group.onLoop(index, body)
    }
    /// How many times this process built the certificate store `policy` trusts: once at most, however
    /// many engines, loops and connections use it.
    package static func trustStoreBuilds(for policy: FetchPolicy) -> Int {
        CurlLoopGroup.trustStoreBuilds(systemCAFile: policy.systemCAFile, caFile: policy.caFile)
    }

    /// Starts `loops` loop threads (default: one per core).
    package init(loops: Int = ProcessInfo.processInfo.activeProcessorCount) throws(FetchError) {
        do throws(CurlKitError) {
            group = try CurlLoopGroup(loops: loops)
        } catch {
            switch error {
            case .outOfDescriptors:
                throw FetchError(.tooManyOpenFiles, "the fetch engine cannot start: \(error)")
            case .initializationFailed:
                throw FetchError(.transferFailed, "the fetch engine cannot start: \(error)")
            }
        }
    }

    /// Aborts every transfer (they fail with `engine-stopped`) and joins the loop threads. Idempotent.
    package func shutdown() {
        group.stop()
        // After the loops: no transfer is left to use a relay.
        let stopping = relays.withLock { relays in
            defer { relays = nil }
            return relays.map { Array($0.values) } ?? []
        }
        for relay in stopping { relay.stop() }
    }

    /// The relay that shapes connections for `profile`, started on first use.
    package func relay(for profile: NetworkProfile) throws(FetchError) -> NetworkRelay {
        let result: Result<NetworkRelay, FetchError> = relays.withLock { relays in
            guard relays != nil else {
                return .failure(FetchError(.engineStopped, "the fetch engine has stopped"))
            }
            if let relay = relays?[profile] { return .success(relay) }
            do throws(NetworkError) {
                let relay = try NetworkRelay(profile: profile)
                relays?[profile] = relay
                // The relay's accepts and sockets that found no descriptor left: the client's fault.
                DescriptorExhaustion.register { [weak relay] in relay?.statistics.descriptorFailures }
                return .success(relay)
            } catch {
                return .failure(FetchError(.transferFailed, error.message))
            }
        }
        return try result.get()
    }

    /// The connect-to rules of `request`: its own, or, under a network profile, through the relay.
    @inline(never)
    private func connectRules(for request: FetchRequest) throws(FetchError) -> [String] {
        let policy = request.policy
        guard let profile = policy.network else { return policy.hostMappings.map(\.description) }
        let relay = try relay(for: profile)
        do throws(NetworkError) {
            return try RelayRouting.rules(for: request.url, mappings: policy.hostMappings, relay: relay)
                .map(\.description)
        } catch {
            let code: FetchError.Code = error.code == .hostUnresolved ? .dnsFailed : .connectFailed
            throw FetchError(code, "\(request.url): \(error.message)")
        }
    }

    /// Sends one small request that is not a download (an SDK's own call: OneSignal's receipt,
    /// Customer.io's delivery metric) with `policy`'s CA and host mappings, and reads its status:
    /// the status, or why no answer came. Plain http is allowed to 127.0.0.1 only (`richpush serve`).
    package func send(
        method: String, url: String, body: [UInt8], headers: [String], deadline: ContinuousClock.Instant,
        policy: FetchPolicy
    ) async -> (status: Int?, error: String?) {
        var request = SmallRequest(method: method, url: url, body: body, headers: headers, deadline: deadline)
        request.connectTimeout = policy.connectTimeout
        request.allowsHTTP = policy.allowHTTP || EndpointRule.problem(with: url) == nil
        request.caFile = policy.caFile
        request.systemCAFile = policy.systemCAFile
        request.hostMappings = policy.hostMappings
        request.userAgent = policy.userAgent
        let outcome = await exchange(request)
        switch outcome.failure {
        case nil, .httpStatus?: return (outcome.httpStatus, nil)
        case .headersTooLarge?:
            return (nil, Self.headersTooLargeText(url))
        case let failure?:
            return (nil, outcome.diagnostic.isEmpty ? "\(failure)" : outcome.diagnostic)
        }
    }

    /// What a response whose headers passed libcurl's limit is reported as (never "Out of memory").
    static func headersTooLargeText(_ url: String) -> String {
        "\(url) answered with response headers over \(TransferFailure.headerLimit / 1024) KB, the most libcurl "
            + "(the client richpush downloads with) reads; a server fault: no CDN or API sends headers that size"
    }

    /// Downloads `request.url`, writing the body to `descriptor` as it arrives (-1 discards it).
    ///
    /// The caller owns the descriptor and whatever it wrote on failure; see ``fetch(_:toNewFileAt:)``
    /// for a version that cleans up after itself.
    @inline(never)
    package func fetch(_ request: FetchRequest, writingTo descriptor: Int32) async throws(FetchError) -> FetchResult {
        let policy = request.policy
        try Self.checkShape(request.url, allowed: policy.transportSecurity == nil ? policy : nil)
        return try await fetchHopByHop(request, transportSecurity: policy.transportSecurity, writingTo: descriptor)
    }

    /// The redirect statuses URLSession follows: 301, 302 and 303 (a non-GET becomes a GET) and 307
    /// and 308 (the method is kept). A download task only ever sends GET, so every hop is a GET. Any
    /// other 3xx (300, 304, 305, 306), Location or not, is the task's final response, not followed.
    static let followedRedirects: Set<Int> = [301, 302, 303, 307, 308]

    /// Follows redirects one transfer at a time, as URLSession does: only the statuses it follows
    /// (``followedRedirects``), at most ``FetchPolicy/maxRedirects`` of them, each hop judged by App
    /// Transport Security's rules for its own host when the policy has them (an exception for one host
    /// says nothing of where it redirects), else by the policy's schemes.
    @inline(never)
    private func fetchHopByHop(
        _ request: FetchRequest, transportSecurity: AppTransportSecurity?, writingTo descriptor: Int32
    ) async throws(FetchError) -> FetchResult {
        // The async frame keeps only the chain's state, the spec and the transfer's outcome: the
        // checks before a hop and the reading after it are functions of their own (@inline(never)),
        // so their values do not stay in the frame of a task that may run thousands of downloads.
        var chain = HopChain(url: request.url)
        while true {
            let spec = try hopSpec(request, chain: chain, transportSecurity: transportSecurity)
            let outcome = await group.transfer(spec, writingTo: descriptor)
            if let result = try Self.afterHop(outcome, chain: &chain, request: request, writingTo: descriptor) {
                return result
            }
        }
    }

    /// Where a chain of redirects stands between its hops.
    private struct HopChain {
        var url: String
        var hops = 0
        var earlier = Duration.zero
        var earlierTrace: TransferTrace?
        var connections = 0
    }

    /// The next hop's transfer, or the error that stops the chain before it: a scheme or ATS refusal.
    @inline(never)
    private func hopSpec(_ request: FetchRequest, chain: HopChain, transportSecurity: AppTransportSecurity?)
        throws(FetchError) -> TransferSpec
    {
        let policy = request.policy
        let url = chain.url
        let hops = chain.hops
        let minimumMinor: Int
        let scheme = Self.scheme(of: url)
        if let transportSecurity {
            switch transportSecurity.decide(url) {
            case .allowed(let version, _):
                minimumMinor = Self.minor(version)
            case .blocked(_, let message, let hint):
                if hops > 0, !["http", "https"].contains(scheme) {
                    throw FetchError(
                        .redirectNotAllowed, "\(request.url) redirected to \(url), whose scheme is not allowed",
                        redirectTarget: url)
                }
                var error = FetchError(
                    .atsBlocked, hops > 0 ? "\(request.url) redirected to \(url): \(message)" : message,
                    redirectTarget: hops > 0 ? url : nil)
                error.hint = hint
                throw error
            }
        } else {
            if hops > 0, !policy.allows(scheme: scheme) {
                throw FetchError(
                    .redirectNotAllowed,
                    "\(request.url) redirected to \(url), whose scheme is not allowed (allowed: \(policy.schemesText))",
                    redirectTarget: url)
            }
            minimumMinor = policy.requireTLS12 ? 2 : 0
        }
        var hop = request
        hop.url = url
        var spec = Self.spec(
            url, policy: policy, deadline: request.deadline,
            schemes: transportSecurity == nil ? policy.schemes : ["http", "https"],
            minimumTLSMinor: minimumMinor, followRedirects: false, connectTo: try connectRules(for: hop))
        // A download task does not fail on a 4xx or 5xx: it receives the body and saves it, and the
        // extension decides. Receive it too, so the verdict can say what the extension would attach.
        spec.failOnHTTPError = false
        return spec
    }

    /// A hop's outcome: the chain's result, or nil when it follows a redirect (`chain` moves on).
    @inline(never)
    private static func afterHop(
        _ outcome: TransferOutcome, chain: inout HopChain, request: FetchRequest, writingTo descriptor: Int32
    ) throws(FetchError) -> FetchResult? {
        let policy = request.policy
        var outcome = outcome
        outcome.totalMicros += chain.earlier.saturatingMicroseconds
        outcome.redirectCount = chain.hops
        chain.connections += outcome.connectionsMade
        outcome.connectionsMade = chain.connections
        if let before = chain.earlierTrace, let trace = outcome.trace { outcome.trace = before.followed(by: trace) }
        chain.earlierTrace = outcome.trace
        guard case .redirect(let location)? = outcome.failure, followedRedirects.contains(outcome.httpStatus) else {
            var hop = request
            hop.url = chain.url
            return try result(of: outcome, request: hop).get()
        }
        chain.hops += 1
        if policy.redirectsStayLocal, !EndpointRule.isLoopback(url: location, mappings: policy.hostMappings) {
            throw FetchError(
                .redirectNotAllowed,
                "\(request.url) redirected to \(location), which is not on this machine: a bench follows "
                    + "redirects to other hosts only with \(Setting.ownsHost)",
                redirectTarget: location)
        }
        guard chain.hops <= policy.maxRedirects else {
            throw FetchError(
                .tooManyRedirects,
                "\(request.url) redirected more than \(policy.maxRedirects) times (URLSession stops there with "
                    + "NSURLErrorHTTPTooManyRedirects, -1007)")
        }
        // The redirect's own body is not the asset: start the file again for the next hop.
        if descriptor >= 0 {
            _ = ftruncate(descriptor, 0)
            _ = lseek(descriptor, 0, SEEK_SET)
        }
        // Later hops' totals count from the first hop's start.
        chain.earlier = .microseconds(outcome.totalMicros)
        chain.url = location
        return nil
    }

    /// The URL's scheme, lowercased (what `URLComponents` reads before the first colon, when that
    /// prefix is a scheme), or "" when it has none: read per hop, without parsing the whole URL.
    static func scheme(of url: String) -> String {
        var scheme = ""
        for byte in url.utf8 {
            if byte == UInt8(ascii: ":") { return scheme }
            guard isSchemeByte(byte), !(scheme.isEmpty && !isLetter(byte)) else { return "" }
            scheme.unicodeScalars.append(Unicode.Scalar(byte | (isLetter(byte) ? 0x20 : 0)))
        }
        return ""
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    private static func minor(_ version: TLSVersion) -> Int {
        switch version {
        case .tls10: return 0
        case .tls11: return 1
        case .tls12: return 2
        case .tls13: return 3
        }
    }

    /// A light check of the URL (curl parses it fully): a scheme, `//` and a host. With a policy, its
    /// scheme must also be allowed, checked before the shape: data:, file: and every other scheme the
    /// device would not fetch here are refused for their scheme, whatever follows the colon.
    @inline(never)
    private static func checkShape(_ url: String, allowed policy: FetchPolicy?) throws(FetchError) {
        let utf8 = Array(url.utf8.prefix(64))
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")), colon > 0,
            utf8[..<colon].allSatisfy(Self.isSchemeByte)
        else {
            throw FetchError(.invalidURL, "'\(url)' is not an absolute URL")
        }
        let scheme = String(decoding: utf8[..<colon], as: UTF8.self)
        if let policy, !policy.allows(scheme: scheme) {
            throw FetchError(
                .schemeNotAllowed, "\(scheme): is not allowed for \(url) (allowed: \(policy.schemesText))")
        }
        if policy == nil, !["http", "https"].contains(scheme.lowercased()) {
            throw FetchError(.schemeNotAllowed, "\(scheme): is not allowed for \(url) (allowed: http,https)")
        }
        guard utf8.count >= colon + 3, utf8[colon + 1] == UInt8(ascii: "/"), utf8[colon + 2] == UInt8(ascii: "/")
        else {
            throw FetchError(.invalidURL, "'\(url)' is not an absolute URL")
        }
        guard colon + 3 < utf8.count, !"/?#".utf8.contains(utf8[colon + 3]) else {
            throw FetchError(.invalidURL, "'\(url)' has no host")
        }
    }

    @inline(never)
    private static func spec(
        _ url: String, policy: FetchPolicy, deadline: ContinuousClock.Instant, schemes: Set<String>,
        minimumTLSMinor: Int, followRedirects: Bool, connectTo: [String]
    ) -> TransferSpec {
        var spec = TransferSpec(
            url: url,
            schemes: schemes,
            maxRedirects: policy.maxRedirects,
            deadline: deadline,
            connectTimeoutMilliseconds: Int(max(1, policy.connectTimeout.wholeMilliseconds)),
            lowSpeedLimit: policy.stallBytesPerSecond,
            lowSpeedSeconds: policy.stallWindow.map { max(1, Int(($0.wholeMilliseconds + 999) / 1000)) } ?? 0,
            maxBytes: policy.maxBytes,
            caFile: policy.caFile,
            systemCAFile: policy.systemCAFile,
            connectTo: connectTo,
            freshConnection: policy.connections == .fresh,
            minimumTLSMinor: minimumTLSMinor,
            followRedirects: followRedirects,
            userAgent: policy.userAgent,
            receiveBufferBytes: policy.receiveBufferBytes,
            headBytes: policy.keepsBodySummary ? TypeSniffer.magicWindow : 0,
            scanLimit: policy.keepsBodySummary ? TypeSniffer.sniffLimit : 0,
            hashBody: policy.keepsBodySummary && policy.hashesBody,
            trace: policy.tracesTransfer)
        spec.acceptEncoding = policy.acceptEncoding
        spec.offersHTTP2 = policy.offersHTTP2
        spec.requestHeaders = policy.headerLines
        if policy.readsCacheHeaders { spec.capturedHeaders = CacheResult.headerNames }
        if policy.readsContentDisposition { spec.capturedHeaders.append("Content-Disposition") }
        return spec
    }

    /// Downloads into a new file at `path`, created exclusively (never through a link, mode 0600).
    ///
    /// On failure the file is removed, so a failed fetch leaves nothing behind.
    package func fetch(_ request: FetchRequest, toNewFileAt path: String) async throws(FetchError) -> FetchResult {
        let descriptor: Int32
        do {
            descriptor = try SystemCall.open(
                path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode: 0o600, operation: "create")
        } catch {
            throw FetchError(storing: error)
        }
        do throws(FetchError) {
            let result = try await fetch(request, writingTo: descriptor)
            guard close(descriptor) == 0 else {
                let failure = SystemError.current("finish writing", path: path)
                unlink(path)
                throw FetchError(storing: failure)
            }
            return result
        } catch {
            close(descriptor)
            unlink(path)
            throw error
        }
    }

    /// RFC 3986 scheme characters: ASCII letters, digits, `+`, `-`, `.`.
    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."):
            return true
        default:
            return false
        }
    }

    @inline(never)
    static func result(of outcome: TransferOutcome, request: FetchRequest) -> Result<FetchResult, FetchError> {
        var details = FetchResult(
            httpStatus: outcome.httpStatus,
            effectiveURL: outcome.effectiveURL.isEmpty ? request.url : outcome.effectiveURL,
            redirectCount: outcome.redirectCount,
            contentType: outcome.contentType,
            contentEncoding: outcome.contentEncoding,
            bytes: outcome.bytes,
            wireBytes: outcome.wireBytes,
            httpVersion: outcome.httpVersion,
            timings: FetchTimings(
                queue: .microseconds(outcome.queueMicros), dns: .microseconds(outcome.dnsMicros),
                connect: .microseconds(outcome.connectMicros), tls: .microseconds(outcome.tlsMicros),
                firstByte: .microseconds(outcome.firstByteMicros), total: .microseconds(outcome.totalMicros)),
            body: outcome.body,
            contentLength: outcome.contentLength,
            trace: outcome.trace,
            contentDisposition: outcome.capturedHeaders["Content-Disposition"])
        details.connectionsMade = outcome.connectionsMade
        if request.policy.readsCacheHeaders, !outcome.capturedHeaders.isEmpty {
            details.cache = CacheResult(headers: outcome.capturedHeaders)
        }
        guard let failure = outcome.failure else { return .success(details) }
        if case .outOfDescriptors = failure { DescriptorExhaustion.note() }
        let url = request.url
        let policy = request.policy
        let cap = policy.maxBytes.map(String.init) ?? "?"
        // The code is the failure table's; the words are this download's.
        let code = FetchError.Code(FetchError.Code.Kind(failure))
        let message: String =
            switch failure {
            case .cancelled:
                "the download of \(url) was cancelled"
            case .engineStopped:
                "the fetch engine stopped before \(url) finished"
            case .deadlineExceeded:
                "\(url) did not finish within the budget (\(Double(outcome.timeoutMilliseconds) / 1000) s); "
                    + "\(outcome.bytes) bytes had arrived"
            case .connectTimeout:
                "connecting to the host of \(details.effectiveURL) (DNS, TCP, TLS) took longer than the connect "
                    + "timeout"
            case .stalled:
                "\(url) stalled: too few bytes arrived for too long (\(outcome.bytes) bytes had arrived)"
            case .schemeRefused:
                "the scheme of \(url) is not allowed (allowed: \(policy.schemesText))"
            case .redirectRefused(let target):
                "\(url) redirected to \(target), whose scheme is not allowed (allowed: \(policy.schemesText))"
            case .malformedURL:
                "'\(url)' is malformed"
            case .dnsFailed:
                "cannot resolve the host of \(url); check the name or map it with \(Setting.connectTo)"
            case .connectFailed:
                "cannot connect to the host of \(url)"
            case .outOfDescriptors:
                "richpush ran out of file descriptors connecting to \(url) (the limit is "
                    + "\(DescriptorBudget.softLimitText)): the client's limit, not the host's; raise it with "
                    + "'ulimit -n' or lower the concurrency"
            case .tlsFailed:
                TLSFailureText(outcome.tls, url: url, policy: policy).message
            case .trustStoreUnreadable(let file, let reason):
                "cannot read the trusted certificates in \(file): \(reason)"
            case .tooManyRedirects:
                "\(url) redirected more than \(policy.maxRedirects) times"
            case .declaredTooLarge:
                "\(url) declares \(outcome.contentLength.map(String.init) ?? "a") Content-Length over the cap "
                    + "of \(cap) bytes"
            case .capExceeded:
                "\(url) sent more than the cap of \(cap) bytes; stopped"
            case .writeFailed(let number):
                "writing the body of \(url) failed: \(SystemError.words(for: number))"
            case .httpStatus:
                "\(details.effectiveURL) answered HTTP \(outcome.httpStatus); expected 2xx"
            case .truncated:
                "\(url) closed the connection after \(outcome.bytes) of "
                    + "\(outcome.contentLength.map(String.init) ?? "?") declared bytes"
            case .connectionReset:
                "the connection to \(url) was reset or closed"
            case .protocolError:
                "\(url) did not answer with valid HTTP"
            case .headersTooLarge:
                Self.headersTooLargeText(url)
            case .redirect(let location):
                "\(details.effectiveURL) answered HTTP \(outcome.httpStatus) with a Location (\(location)) that "
                    + "URLSession does not follow (it follows 301, 302, 303, 307 and 308): the task ends with "
                    + "that response"
            case .other:
                "downloading \(url) failed"
            }
        var target: String?
        if case .redirectRefused(let url) = failure { target = url }
        var error = FetchError(code, message, details: details, cause: outcome.diagnostic, redirectTarget: target)
        if case .writeFailed(let number) = failure {
            error.systemError = SystemError(code: number, operation: "write the body of", path: url)
        }
        switch failure {
        case .tlsFailed:
            let text = TLSFailureText(outcome.tls, url: url, policy: policy)
            error.tlsProblem = text.problem
            error.hint = text.hint
        case .trustStoreUnreadable:
            error.tlsProblem = .caFileUnusable
            error.hint = "give a CA file in PEM form that holds at least one certificate"
        case .cancelled, .engineStopped, .deadlineExceeded, .connectTimeout, .stalled, .schemeRefused, .redirectRefused,
            .malformedURL, .dnsFailed, .connectFailed, .outOfDescriptors, .tooManyRedirects, .declaredTooLarge,
            .capExceeded, .writeFailed, .httpStatus, .truncated, .connectionReset, .protocolError, .headersTooLarge,
            .redirect, .other:
            break
        }
        return .failure(error)
    }
}
