import Foundation

/// A TCP port on 127.0.0.1 that was free a moment ago and has nothing listening: connections are refused.
public struct ClosedPort {
    public let number: UInt16

    public init() throws {
        let listener = try SilentListener()
        number = listener.port
        listener.close()
    }
}

/// A socket listening on 127.0.0.1 that never accepts: TCP connects (the kernel completes the
/// handshake), but nothing is ever said, so a TLS handshake hangs.
public final class SilentListener: @unchecked Sendable {
    public let port: UInt16
    private var descriptor: Int32

    public init() throws {
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

    public func close() {
        if descriptor >= 0 {
            Glibc.close(descriptor)
            descriptor = -1
        }
    }

    deinit { close() }
}
