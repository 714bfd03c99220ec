import CAssetServerShim
import Foundation

/// Starts a request's record when its request line arrives: libmicrohttpd's URI logger, the only
/// place that sees the target before percent-decoding (so `%00` cannot silently cut a path short).
func recordRequest(
    _ context: UnsafeMutableRawPointer?, _ uri: UnsafePointer<CChar>?, _ connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    let record = RequestRecord(rawTarget: uri.map { String(cString: $0) } ?? "")
    return Unmanaged.passRetained(record).toOpaque()
}

/// Ends a request: starts the connection's wait for its next head, prints the request's access-log
/// entry (when asked for) and releases its record.
func finishRequest(
    _ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ requestState: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ termination: MHD_RequestTerminationCode
) {
    let state = context.map { Unmanaged<ServerState>.fromOpaque($0).takeUnretainedValue() }
    if let state, let connection { state.heads.requestEnded(connection) }
    guard let requestState, let pointer = requestState.pointee else { return }
    requestState.pointee = nil
    let record = Unmanaged<RequestRecord>.fromOpaque(pointer).takeRetainedValue()
    state?.accessLog?(record.logEntry())
}

/// Answers one request: libmicrohttpd's access handler, called on an event-loop thread.
///
/// Called again for the same request after a `delay=` fault's suspension ends; the request's
/// ``RequestRecord`` tells the calls apart.
func handleRequest(
    _ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
    _ uploadSize: UnsafeMutablePointer<Int>?, _ requestState: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let context, let connection, let requestState, let pointer = requestState.pointee else { return .NO }
    let state = Unmanaged<ServerState>.fromOpaque(context).takeUnretainedValue()
    let record = Unmanaged<RequestRecord>.fromOpaque(pointer).takeUnretainedValue()
    // The first call comes once the whole head is in: the connection owes nothing until the request ends.
    if record.sequence == 0 { state.heads.headArrived(connection) }
    let socket = rp_mhd_connection_fd(connection)
    let path = url.map { String(cString: $0) } ?? "/"
    if let service = state.usersTrack, record.usersTrack != nil || (record.sequence == 0 && path == "/users/track") {
        if record.sequence == 0 {
            record.sequence = state.countRequest()
            record.method = method.map { String(cString: $0) } ?? ""
            record.usersTrack = UsersTrackRequest()
            return .YES
        }
        return handleUsersTrack(
            connection, record: record, state: state, service: service, socket: socket, method: method,
            version: version, uploadData: uploadData, uploadSize: uploadSize)
    }
    if record.sdkEndpoint || (record.sequence == 0 && SDKEndpoint.answers(path)) {
        if record.sequence == 0 {
            record.sequence = state.countRequest()
            record.method = method.map { String(cString: $0) } ?? ""
            record.sdkEndpoint = true
            return .YES
        }
        return handleSDKEndpoint(
            connection, path: path, record: record, state: state, socket: socket, uploadSize: uploadSize)
    }
    if record.sequence == 0 {
        record.sequence = state.countRequest()
        record.method = method.map { String(cString: $0) } ?? ""
        guard record.method == "GET" || record.method == "HEAD" else {
            return respond(
                connection, record, status: 405, page: "Method Not Allowed", detail: "only GET and HEAD are served")
        }
        guard !record.decodedPath.contains(0) else {
            return respond(
                connection, record, status: 400, page: "Bad Request", detail: "the path holds a NUL byte (%00)")
        }
        do {
            record.plan = try FaultPlan(query: queryArguments(of: connection), strict: state.strictFaults)
                .applying(toRequest: record.sequence)
        } catch {
            return respond(connection, record, status: 400, page: "Bad Request", detail: error.description)
        }
        if record.plan?.resetAt == 0 {
            _ = rp_socket_reset(socket)
            return .NO
        }
        if let delay = record.plan?.delayMilliseconds, delay > 0 {
            record.delayUntil = .now + .milliseconds(delay)
        }
        // The emulated edge: a miss (or a request collapsed into a fill) is answered once the fill is done.
        if let edge = state.edge, path != "/" {
            let lookup = edge.lookup(record.rawTarget)
            record.edgeHeaders = edge.headers(lookup)
            let ready: ContinuousClock.Instant
            switch lookup {
            case .hit(let moment, _), .miss(let moment): ready = moment
            }
            if ready > .now { record.delayUntil = max(record.delayUntil ?? ready, ready) }
        }
    }
    guard let plan = record.plan else { return .NO }
    if let until = record.delayUntil {
        if state.isStopping { return .NO }
        if ContinuousClock.now < until {
            // Resumed early because the client hung up, or the first call: wait (again) off the loop thread.
            if rp_socket_peer_gone(socket) != 0 { return .NO }
            return state.suspensions.suspend(connection, socket: socket, until: until) ? .YES : .NO
        }
        record.delayUntil = nil
    }
    return serve(path, plan: plan, connection: connection, socket: socket, record: record, state: state)
}

/// Sends the answer a request's plan asks for, once any delay has passed.
private func serve(
    _ path: String, plan: FaultPlan, connection: OpaquePointer, socket: Int32, record: RequestRecord,
    state: ServerState
) -> MHD_Result {
    if path == "/" { return respondIndex(connection, record, root: state.root) }
    if plan.redirects > 0 {
        var query = plan.passthroughQuery
        if plan.redirects > 1 { query.append(("redirect", String(plan.redirects - 1))) }
        let location =
            path + (query.isEmpty ? "" : "?" + query.map { "\(escape($0))=\(escape($1))" }.joined(separator: "&"))
        return redirect(connection, record, to: location, code: plan.redirectCode)
    }
    if let target = plan.redirectTarget { return redirect(connection, record, to: target, code: plan.redirectCode) }
    if let status = plan.status, !(200..<300).contains(status), !plan.statusBodyIsAsset {
        return respond(
            connection, record, status: status, page: "Error \(status)", detail: "status=\(status) was requested")
    }
    guard let relative = relativeAssetPath(path) else {
        return respond(connection, record, status: 404, page: "Not Found", detail: "no asset at \(path)")
    }
    let descriptor = openBeneath(state.rootDescriptor, path: relative)
    var info = stat()
    guard descriptor >= 0, fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
        if descriptor >= 0 { close(descriptor) }
        return respond(connection, record, status: 404, page: "Not Found", detail: "no asset at \(path)")
    }
    guard
        let body = ResponseBody(
            descriptor: descriptor, fileSize: UInt64(info.st_size), plan: plan, connection: connection,
            socket: socket, server: state)
    else {
        return respond(
            connection, record, status: 503, page: "Service Unavailable", detail: "out of memory for gzip")
    }
    let retained = Unmanaged.passRetained(body).toOpaque()
    guard
        let response = MHD_create_response_from_callback(
            body.declaredLength ?? RP_SIZE_UNKNOWN, 32 * 1024, readBody, retained, releaseBody)
    else {
        Unmanaged<ResponseBody>.fromOpaque(retained).release()
        return .NO
    }
    defer { MHD_destroy_response(response) }
    MHD_add_response_header(response, "Content-Type", plan.contentType ?? MediaTypes.contentType(forPath: path))
    if record.edgeHeaders.isEmpty {
        MHD_add_response_header(response, "Cache-Control", "no-store")
    } else {
        MHD_add_response_header(response, "Cache-Control", "public, max-age=86400")
        for (name, value) in record.edgeHeaders { MHD_add_response_header(response, name, value) }
    }
    if plan.gzip { MHD_add_response_header(response, "Content-Encoding", "gzip") }
    if let disposition = plan.contentDisposition {
        MHD_add_response_header(response, "Content-Disposition", disposition)
    }
    let status = plan.status ?? 200
    record.status = status
    record.body = body
    return MHD_queue_response(connection, UInt32(status), response)
}

private func readBody(
    _ context: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ max: Int
)
    -> Int
{
    guard let context, let buffer else { return RP_READER_END_WITH_ERROR }
    let body = Unmanaged<ResponseBody>.fromOpaque(context).takeUnretainedValue()
    return body.read(at: position, into: UnsafeMutableRawBufferPointer(start: buffer, count: max))
}

private func releaseBody(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<ResponseBody>.fromOpaque(context).release()
}

private final class QueryBox {
    var arguments: [(String, String)] = []
}

/// The request's query arguments, in order (the fault parameters of every route).
func queryArguments(of connection: OpaquePointer) -> [(String, String)] {
    let box = QueryBox()
    withExtendedLifetime(box) {
        rp_mhd_query_arguments(
            connection,
            { context, key, value in
                guard let context, let key, let value else { return }
                let box = Unmanaged<QueryBox>.fromOpaque(context).takeUnretainedValue()
                box.arguments.append((String(cString: key), String(cString: value)))
            }, Unmanaged.passUnretained(box).toOpaque())
    }
    return box.arguments
}

/// The URL path (percent-decoded) as a path relative to the served folder, or nil when it names
/// nothing servable: empty, ending in `/` (a file name then a slash, typed or sent as `%2F`, names a
/// folder; folders are not served), or with a component starting with `.` (`..`, `.`, dotfiles and
/// dot-folders such as `.git`).
func relativeAssetPath(_ urlPath: String) -> String? {
    let parts = urlPath.split(separator: "/")
    guard !parts.isEmpty, !urlPath.hasSuffix("/"), !parts.contains(where: { $0.hasPrefix(".") }) else { return nil }
    return parts.joined(separator: "/")
}

/// Opens `path` for reading strictly beneath the folder `root`, following no symbolic link on the
/// way, or returns -1.
///
/// One kernel call resolves the whole path against the open folder (openat2 with
/// `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`; one `openat(O_NOFOLLOW)` per component on kernels
/// before 5.6, or with `walk`), so swapping a folder for a link between a check and the open is
/// no longer possible: there is no separate check. A FIFO is opened without blocking; callers
/// `fstat` the descriptor and serve only regular files.
func openBeneath(_ root: Int32, path: String, walk: Bool = false) -> Int32 {
    rp_open_beneath(root, path, walk ? 1 : 0)
}

private func escape(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+?#")))
        ?? text
}

private func redirect(_ connection: OpaquePointer, _ record: RequestRecord, to location: String, code: Int)
    -> MHD_Result
{
    respond(
        connection, record, status: code, page: redirectPhrases[code] ?? "Redirect", detail: "moved to \(location)",
        headers: [("Location", location)])
}

/// The reason phrases of the redirect statuses `code=` can ask for.
private let redirectPhrases = [
    300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
    305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect",
]

private func respondIndex(_ connection: OpaquePointer, _ record: RequestRecord, root: String) -> MHD_Result {
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter { !$0.hasPrefix(".") }
        .sorted()
    let text =
        "richpush asset server: \(root)\n\n" + names.map { "/\($0)\n" }.joined()
        + "\nFault modes (query parameters): delay=MS status=CODE redirect=N to=URL code=3XX type=MIME gzip=1\n"
        + "size=BYTES chunked=1 endless=1 truncate=BYTES length=BYTES stall=BYTES stall-ms=MS rate=BPS reset=BYTES every=K\n"
    return respond(connection, record, status: 200, body: Array(text.utf8), type: "text/plain; charset=utf-8")
}

private func respond(
    _ connection: OpaquePointer, _ record: RequestRecord, status: Int, page: String, detail: String,
    headers: [(String, String)] = []
) -> MHD_Result {
    let safe = detail.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
    let html =
        "<!DOCTYPE html>\n<html><head><title>\(status) \(page)</title></head>\n<body><h1>\(page)</h1><p>\(safe)</p></body></html>\n"
    return respond(
        connection, record, status: status, body: Array(html.utf8), type: "text/html; charset=utf-8",
        headers: headers)
}

func respond(
    _ connection: OpaquePointer, _ record: RequestRecord, status: Int, body: [UInt8], type: String,
    headers: [(String, String)] = []
) -> MHD_Result {
    let response = body.withUnsafeBytes { bytes in
        rp_mhd_response_copy(bytes.baseAddress, bytes.count)
    }
    guard let response else { return .NO }
    defer { MHD_destroy_response(response) }
    MHD_add_response_header(response, "Content-Type", type)
    MHD_add_response_header(response, "Cache-Control", "no-store")
    for (name, value) in headers { MHD_add_response_header(response, name, value) }
    record.status = status
    record.bufferedBytes = UInt64(body.count)
    return MHD_queue_response(connection, UInt32(status), response)
}
