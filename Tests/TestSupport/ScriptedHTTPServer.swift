import Foundation

/// An HTTP/1.1 server on 127.0.0.1 that answers each request with what a script returns for it:
/// any status, any headers and any body, hostile ones included (a `Retry-After: 1e19`, a body that
/// echoes the `Authorization` header). One connection at a time, `Connection: close`; serves at
/// most `limit` requests, then stops by itself.
///
/// ```swift
/// let server = try ScriptedHTTPServer { request in .init(status: 401, body: request.header("Authorization") ?? "") }
/// defer { server.close() }
/// ```
package final class ScriptedHTTPServer: @unchecked Sendable {  // The port is immutable; the rest is the thread's.
    /// A request as the script sees it.
    package struct Request: Sendable {
        /// Which request this is, from 0.
        package var index: Int
        /// The request line and headers, as received.
        package var head: String
        package var body: [UInt8]

        /// The value of the header `name` (case-insensitive), if the request has it.
        package func header(_ name: String) -> String? {
            for line in head.split(separator: "\r\n").dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                if line[..<colon].lowercased() == name.lowercased() {
                    return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
            }
            return nil
        }
    }

    /// An answer: status, headers, body.
    package struct Response: Sendable {
        package var status: Int
        package var headers: [(String, String)]
        package var body: String

        package init(status: Int, headers: [(String, String)] = [], body: String = "") {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    package let port: UInt16
    private let listener: SilentListener

    /// `http://127.0.0.1:PORT`.
    package var baseURL: String { "http://127.0.0.1:\(port)" }

    package init(limit: Int = 64, _ script: @escaping @Sendable (Request) -> Response) throws {
        listener = try SilentListener()
        port = listener.port
        let descriptor = listener.descriptorForAccepting
        Thread.detachNewThread {
            for index in 0..<limit {
                let client = accept(descriptor, nil, nil)
                guard client >= 0 else { return }
                var timeout = timeval(tv_sec: 10, tv_usec: 0)
                setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                if let request = Self.read(client, index: index) {
                    let response = script(request)
                    var text = "HTTP/1.1 \(response.status) Scripted\r\nConnection: close\r\n"
                    text += "Content-Type: application/json\r\nContent-Length: \(response.body.utf8.count)\r\n"
                    for (name, value) in response.headers { text += "\(name): \(value)\r\n" }
                    let bytes = Array((text + "\r\n" + response.body).utf8)
                    _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                }
                Glibc.close(client)
            }
        }
    }

    /// The request head and its `Content-Length` body, or nil when the client went away first.
    private static func read(_ client: Int32, index: Int) -> Request? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        let separator = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        var needed = Int.max
        while received.count < needed && received.count < 8 << 20 {
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            received += buffer[..<count]
            if headEnd == nil, let end = received.firstRange(of: separator)?.upperBound {
                headEnd = end
                let head = String(decoding: received[..<end], as: UTF8.self)
                let parsed = Request(index: index, head: head, body: [])
                let length = parsed.header("Content-Length").flatMap { Int($0) }
                if parsed.header("Expect")?.lowercased() == "100-continue" {
                    let continuing = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
                    _ = continuing.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                }
                needed = end + max(0, min(length ?? 0, 8 << 20))
            }
        }
        guard let headEnd else { return nil }
        return Request(
            index: index, head: String(decoding: received[..<headEnd], as: UTF8.self),
            body: Array(received[headEnd...]))
    }

    /// Stops accepting (a blocked accept returns an error and the thread ends).
    package func close() {
        shutdown(listener.descriptorForAccepting, Int32(SHUT_RDWR))
        listener.close()
    }
}
