import CAssetServerShim
import Foundation

/// Answers one request: libmicrohttpd's access handler, called on the connection's own thread.
func handleRequest(
    _ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
    _ uploadSize: UnsafeMutablePointer<Int>?, _ requestState: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let context, let connection else { return .NO }
    let state = Unmanaged<ServerState>.fromOpaque(context).takeUnretainedValue()
    let sequence = state.countRequest()
    let path = url.map { String(cString: $0) } ?? "/"
    let verb = method.map { String(cString: $0) } ?? ""
    guard verb == "GET" || verb == "HEAD" else {
        return respond(connection, status: 405, page: "Method Not Allowed", detail: "only GET and HEAD are served")
    }
    let plan: FaultPlan
    do {
        plan = try FaultPlan(query: queryArguments(of: connection)).applying(toRequest: sequence)
    } catch {
        return respond(connection, status: 400, page: "Bad Request", detail: error.description)
    }
    let socket = rp_mhd_connection_fd(connection)
    if plan.resetAt == 0 {
        _ = rp_socket_reset(socket)
        return .NO
    }
    if plan.delayMilliseconds > 0 && !pause(milliseconds: plan.delayMilliseconds, server: state, socket: socket) {
        return .NO
    }
    if path == "/" { return respondIndex(connection, root: state.root) }
    if plan.redirects > 0 {
        var query = plan.passthroughQuery
        if plan.redirects > 1 { query.append(("redirect", String(plan.redirects - 1))) }
        let location =
            path + (query.isEmpty ? "" : "?" + query.map { "\(escape($0))=\(escape($1))" }.joined(separator: "&"))
        return redirect(connection, to: location)
    }
    if let target = plan.redirectTarget { return redirect(connection, to: target) }
    if let status = plan.status, !(200..<300).contains(status) {
        return respond(connection, status: status, page: "Error \(status)", detail: "status=\(status) was requested")
    }
    guard let file = resolve(path, root: state.root) else {
        return respond(connection, status: 404, page: "Not Found", detail: "no asset at \(path)")
    }
    let descriptor = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    var info = stat()
    guard descriptor >= 0, fstat(descriptor, &info) == 0 else {
        if descriptor >= 0 { close(descriptor) }
        return respond(connection, status: 404, page: "Not Found", detail: "cannot open \(path)")
    }
    var source = ResponseBody.Source.file(descriptor: descriptor, size: UInt64(info.st_size))
    var bodyPlan = plan
    if plan.gzip {
        guard !plan.endless, let compressed = gzipped(source, size: plan.size) else {
            close(descriptor)
            return respond(connection, status: 400, page: "Bad Request", detail: "gzip needs a finite body under 64 MB")
        }
        close(descriptor)
        source = .bytes(compressed)
        bodyPlan.size = nil
    }
    let body = ResponseBody(source: source, plan: bodyPlan, socket: socket, server: state)
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
    MHD_add_response_header(response, "Cache-Control", "no-store")
    if plan.gzip { MHD_add_response_header(response, "Content-Encoding", "gzip") }
    return MHD_queue_response(connection, UInt32(plan.status ?? 200), response)
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

private func queryArguments(of connection: OpaquePointer) -> [(String, String)] {
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

/// Maps a URL path to a regular file inside `root`, or nil; `..` and links out of the root never resolve.
func resolve(_ urlPath: String, root: String) -> String? {
    var parts: [Substring] = []
    for part in urlPath.split(separator: "/") where part != "." {
        if part == ".." { return nil }
        parts.append(part)
    }
    guard !parts.isEmpty, let real = realpath(root + "/" + parts.joined(separator: "/"), nil) else { return nil }
    let resolved = String(cString: real)
    free(real)
    var info = stat()
    guard resolved.hasPrefix(root + "/"), stat(resolved, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
        return nil
    }
    return resolved
}

private func gzipped(_ source: ResponseBody.Source, size: UInt64?) -> [UInt8]? {
    guard case .file(let descriptor, let fileSize) = source else { return nil }
    let length = size ?? fileSize
    guard length <= 64 << 20 else { return nil }
    var bytes = [UInt8](repeating: 0, count: Int(length))
    let wanted = Int(min(length, fileSize))
    let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, wanted, 0) }
    guard got == wanted else { return nil }
    var outLength = 0
    guard
        let output = bytes.withUnsafeBytes({
            rp_gzip($0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count, &outLength)
        })
    else { return nil }
    defer { rp_free(output) }
    return Array(UnsafeBufferPointer(start: output, count: outLength))
}

private func escape(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+?#")))
        ?? text
}

private func redirect(_ connection: OpaquePointer, to location: String) -> MHD_Result {
    respond(connection, status: 302, page: "Found", detail: "moved to \(location)", headers: [("Location", location)])
}

private func respondIndex(_ connection: OpaquePointer, root: String) -> MHD_Result {
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted()
    let text =
        "richpush asset server: \(root)\n\n" + names.map { "/\($0)\n" }.joined()
        + "\nFault modes (query parameters): delay=MS status=CODE redirect=N to=URL type=MIME gzip=1 size=BYTES\n"
        + "chunked=1 endless=1 truncate=BYTES length=BYTES stall=BYTES stall-ms=MS rate=BPS reset=BYTES every=K\n"
    return respond(connection, status: 200, body: Array(text.utf8), type: "text/plain; charset=utf-8")
}

private func respond(
    _ connection: OpaquePointer, status: Int, page: String, detail: String, headers: [(String, String)] = []
) -> MHD_Result {
    let safe = detail.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
    let html =
        "<!DOCTYPE html>\n<html><head><title>\(status) \(page)</title></head>\n<body><h1>\(page)</h1><p>\(safe)</p></body></html>\n"
    return respond(
        connection, status: status, body: Array(html.utf8), type: "text/html; charset=utf-8", headers: headers)
}

private func respond(
    _ connection: OpaquePointer, status: Int, body: [UInt8], type: String, headers: [(String, String)] = []
) -> MHD_Result {
    let response = body.withUnsafeBytes { bytes in
        rp_mhd_response_copy(bytes.baseAddress, bytes.count)
    }
    guard let response else { return .NO }
    defer { MHD_destroy_response(response) }
    MHD_add_response_header(response, "Content-Type", type)
    MHD_add_response_header(response, "Cache-Control", "no-store")
    for (name, value) in headers { MHD_add_response_header(response, name, value) }
    return MHD_queue_response(connection, UInt32(status), response)
}
