import Foundation

/// A TCP port on 127.0.0.1 that was free a moment ago and has nothing listening: connections are refused.
package struct ClosedPort {
    package let number: UInt16

    package init() throws {
        let listener = try SilentListener()
        number = listener.port
        listener.close()
    }
}

/// A socket listening on 127.0.0.1 that never accepts: TCP connects (the kernel completes the
/// handshake), but nothing is ever said, so a TLS handshake hangs.
package final class SilentListener: @unchecked Sendable {
    package let port: UInt16
    private var descriptor: Int32

    package init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            Glibc.close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
    }

    package func close() {
        if descriptor >= 0 {
            Glibc.close(descriptor)
            descriptor = -1
        }
    }

    /// The listening socket, for a test server that does accept.
    var descriptorForAccepting: Int32 { descriptor }

    deinit { close() }
}

/// A TCP server on 127.0.0.1 that answers every connection with a fixed text that is not HTTP
/// (an SSH banner, say), then closes. Serves at most `limit` connections, then stops by itself.
package final class BannerServer: @unchecked Sendable {
    package let port: UInt16
    private let listener: SilentListener

    package init(banner: String = "SSH-2.0-OpenSSH_9.2\r\n", limit: Int = 8) throws {
        listener = try SilentListener()
        port = listener.port
        let descriptor = listener.descriptorForAccepting
        let bytes = Array(banner.utf8)
        Thread.detachNewThread {
            for _ in 0..<limit {
                let client = accept(descriptor, nil, nil)
                guard client >= 0 else { return }
                _ = bytes.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
                usleep(100_000)
                Glibc.close(client)
            }
        }
    }

    /// Stops accepting (a blocked accept returns an error and the thread ends).
    package func close() {
        shutdown(listener.descriptorForAccepting, Int32(SHUT_RDWR))
        listener.close()
    }
}

/// Runs blocking work on a Dispatch thread, so blocking sockets and sleeps never hold Swift's
/// cooperative pool (two threads on a two-core machine: one blocked test would stall every other).
/// Check expectations on what it returns, in the test's own task.
package func offThePool<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Swift.Result { try body() }) }
    }
}
