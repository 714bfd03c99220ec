import Foundation

/// Guards a bench against loading hosts it should not, and against running out of descriptors.
public enum BenchSafety {
    /// Whether the connection for `url` goes to this machine, after `--connect-to` mappings.
    public static func isLoopback(url: String, mappings: [HostMapping]) -> Bool {
        guard let components = URLComponents(string: url), let host = components.host?.lowercased() else {
            return false
        }
        let port = components.port.map(String.init) ?? (components.scheme?.lowercased() == "http" ? "80" : "443")
        var target = host
        if let mapping = mappings.first(where: {
            ($0.host.isEmpty || $0.host.lowercased() == host) && ($0.port.isEmpty || $0.port == port)
        }), !mapping.targetHost.isEmpty {
            target = mapping.targetHost.lowercased()
        }
        target = target.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return target == "localhost" || target == "::1" || target.hasPrefix("127.")
    }

    /// Descriptors the process holds besides its transfers: standard streams, the loops' epoll and
    /// eventfd, libmagic's database, the report files, and room for what libraries open.
    static let baseDescriptors = 64

    /// The open files a bench with `concurrency` devices in flight needs: a socket each, plus a
    /// temporary file each when attachments are kept.
    public static func descriptorsNeeded(concurrency: Int, storing: Bool) -> Int {
        baseDescriptors + concurrency * (storing ? 2 : 1)
    }

    /// The largest concurrency that fits in `descriptors` open files.
    public static func concurrency(forDescriptors descriptors: Int, storing: Bool) -> Int {
        max(1, (descriptors - baseDescriptors) / (storing ? 2 : 1))
    }

    /// Raises the soft limit on open files to the hard limit (a burst needs one socket per device in
    /// flight); returns the soft limit now in force.
    @discardableResult
    public static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return Int.max }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }

    /// The hard limit on open files, which an unprivileged process cannot pass.
    public static var hardOpenFileLimit: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return Int.max }
        return limit.rlim_max >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_max)
    }
}
