import Glibc
import Synchronization

/// How many open files a run needs, against how many this process may open: the one place that
/// reads `RLIMIT_NOFILE` and counts what is already open, so a run that cannot hold its downloads'
/// descriptors is refused before it starts, with the numbers and the fix, instead of failing
/// downloads that would be blamed on the host.
///
/// Each download in flight holds libcurl's socket, plus two more when a network profile routes it
/// through the shaping relay (the accepted connection and the one to the host), plus the
/// attachment's temporary file when it is stored. Around them the process keeps a fixed reserve
/// (``reserve``) for the standard streams, the loops' epoll and eventfd descriptors, libmagic's
/// database, the journal, reports and what libraries open on their own (the resolver, the trust
/// store), and whatever was already open when richpush started (a parent's leaked descriptors count).
///
/// ```swift
/// let need = DescriptorBudget.Need(concurrency: 64, relayShare: 2, storing: true)
/// if let shortfall = DescriptorBudget.current(raising: true).shortfall(need, option: "--concurrency") {
///     throw ConfigurationError(.tooFewDescriptors, shortfall)
/// }
/// ```
package struct DescriptorBudget: Sendable, Equatable {
    /// Descriptors kept back for everything but the downloads.
    package static let reserve = 64

    /// The soft limit on open files (`ulimit -n`).
    package var limit: Int
    /// The hard limit, which an unprivileged process cannot pass.
    package var hardLimit: Int
    /// Descriptors open when the budget was read.
    package var open: Int

    package init(limit: Int, hardLimit: Int, open: Int) {
        self.limit = limit
        self.hardLimit = hardLimit
        self.open = open
    }

    /// What one run needs: how many downloads at once, and what each one holds.
    package struct Need: Sendable, Equatable {
        package var concurrency: Int
        /// Descriptors each download holds in the shaping relay (a network profile or a network mix),
        /// 0 when downloads are not relayed: the relay's own share, which the caller knows.
        package var relayShare: Int
        /// Each download's attachment is written to a temporary file.
        package var storing: Bool
        /// Descriptors the run holds whatever its downloads, beyond the ``reserve``: the shaping
        /// relay's own (its epoll set, wake-up event, timer and a listener per route), 0 without one.
        package var fixed: Int

        package init(concurrency: Int, relayShare: Int, storing: Bool, fixed: Int = 0) {
            self.concurrency = concurrency
            self.relayShare = max(0, relayShare)
            self.storing = storing
            self.fixed = max(0, fixed)
        }

        /// Descriptors one download in flight holds.
        package var perDownload: Int { 1 + relayShare + (storing ? 1 : 0) }

        /// What each download holds, in words, for messages.
        var parts: String {
            var parts = ["a socket"]
            if relayShare > 0 { parts.append("\(relayShare) for the network profile's relay") }
            if storing { parts.append("a temporary file") }
            return parts.joined(separator: ", ")
        }
    }

    /// The limits in force and the descriptors open now; with `raising`, the soft limit is first
    /// raised to the hard limit (a burst needs one socket per device in flight).
    ///
    /// Limits that cannot be read do not limit: both are `Int.max`, as for `unlimited`.
    package static func current(raising: Bool = false) -> DescriptorBudget {
        if raising { raiseToHardLimit() }
        let limits = Self.limits()
        return DescriptorBudget(limit: limits?.soft ?? Int.max, hardLimit: limits?.hard ?? Int.max, open: openCount())
    }

    /// The soft and hard limits on open files (`RLIMIT_NOFILE`), `Int.max` for unlimited; nil when
    /// they cannot be read, the one answer for "unknown".
    package static func limits() -> (soft: Int, hard: Int)? {
        var limits = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0 else { return nil }
        // RLIM_INFINITY is the largest rlim_t, which clamps to Int.max.
        return (Int(clamping: limits.rlim_cur), Int(clamping: limits.rlim_max))
    }

    /// The soft limit on open files (`ulimit -n`), or nil when it cannot be read.
    package static var softLimit: Int? { limits()?.soft }

    /// The soft limit in words, for messages: a number, `unlimited`, or `unknown`.
    package static var softLimitText: String { text(forLimit: softLimit) }

    /// A limit in words: a number, `unlimited` (`Int.max`), or `unknown` (nil).
    package static func text(forLimit limit: Int?) -> String {
        guard let limit else { return "unknown" }
        return limit == Int.max ? "unlimited" : String(limit)
    }

    /// Raises the soft limit to the hard limit (a server or a burst needs one descriptor per
    /// connection); true when the soft limit is now the hard limit.
    @discardableResult
    package static func raiseToHardLimit() -> Bool {
        var limits = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0 else { return false }
        guard limits.rlim_cur < limits.rlim_max else { return true }
        limits.rlim_cur = limits.rlim_max
        return setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0
    }

    /// Raises the soft limit to at least `minimum` when it is lower and the hard limit allows; false
    /// when the process cannot have that many. A limit that cannot be read is taken as enough.
    package static func ensureSoftLimit(atLeast minimum: Int) -> Bool {
        var limits = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0 else { return true }
        let needed = rlim_t(max(0, minimum))
        guard limits.rlim_cur < needed else { return true }
        guard limits.rlim_max >= needed else { return false }
        limits.rlim_cur = needed
        return setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0
    }

    /// Descriptors open in this process: the entries of `/proc/self/fd` (less the one listing it),
    /// or, where that cannot be read, a probe of every number below the limit (bounded).
    static func openCount() -> Int {
        if let directory = opendir("/proc/self/fd") {
            defer { closedir(directory) }
            var count = 0
            while let entry = readdir(directory) {
                if SystemCall.entryName(entry).first != UInt8(ascii: ".") { count += 1 }
            }
            return max(0, count - 1)
        }
        var count = 0
        for descriptor in 0..<Int32(4096) where fcntl(descriptor, F_GETFD) >= 0 { count += 1 }
        return count
    }

    /// Descriptors a run needs in all: what is open now, the reserve, and each download's share.
    package func needed(_ need: Need) -> Int {
        let (downloads, overflow) = need.concurrency.multipliedReportingOverflow(by: need.perDownload)
        return overflow ? Int.max : open + Self.reserve + need.fixed + downloads
    }

    /// The most downloads at once that fit, or 0 when not even one does.
    package func fitting(_ need: Need) -> Int {
        max(0, (limit - open - Self.reserve - need.fixed) / need.perDownload)
    }

    /// Nil when `need` fits; otherwise the sentence that says why not and what to do, naming
    /// `option` (the concurrency option of the command, as the caller spells it). The advice never
    /// proposes a concurrency below 1, which no command takes.
    package func shortfall(_ need: Need, option: some CustomStringConvertible) -> String? {
        shortfall(
            need, lead: "\(option) \(need.concurrency)", share: "\(need.perDownload) per download: ",
            option: option.description)
    }

    /// Nil when one download (`process`, a single `fetch`) fits; otherwise the sentence that says
    /// why not and what to do. Checked before a single run as before a batch: a process that holds
    /// its last descriptor leaves none for the runtime (libdispatch opens `/proc/TID/stat` each second
    /// while work is queued, and stops the process when it cannot), so the run is refused instead.
    package func shortfall(single need: Need) -> String? {
        shortfall(need, lead: "too many open files: one download", share: "", option: nil)
    }

    private func shortfall(_ need: Need, lead: String, share: String, option setting: String?) -> String? {
        let total = needed(need)
        guard total > limit else { return nil }
        var text =
            "\(lead) needs about \(total) open files (\(share)"
            + "\(need.parts); \(open) already open; \(Self.reserve) kept for richpush itself"
            + (need.fixed > 0 ? "; \(need.fixed) for the network profile's relay itself" : "")
            + "), but this process may "
            + "open only \(limit) (ulimit -n; the hard limit is \(Self.text(forLimit: hardLimit))). "
        if total <= hardLimit {
            text += "Raise it with 'ulimit -n \(total)'"
        } else {
            text += "Raise the hard limit (as root, or in /etc/security/limits.conf) to \(total)"
        }
        let fits = fitting(need)
        if let setting, fits >= 1 && fits < need.concurrency { text += ", or lower \(setting) to \(fits)" }
        if open > 64 { text += "; or close the descriptors the parent process left open (\(open))" }
        return text + "."
    }
}

/// Whether this process ran out of file descriptors, and when: every place that sees EMFILE or
/// ENFILE (a socket, an accept in the relay, a temporary file, libmagic's database) notes it here.
///
/// A download that fails in a way the host could also cause (DNS, connect, TLS, a reset, a store or
/// sniff failure) while the count moved is the client's failure, `too-many-open-files`: the host was
/// never really asked. Counting, not probing afterwards, because the descriptors are often free
/// again by the time the failure is read.
package enum DescriptorExhaustion {
    private static let count = Atomic<Int>(0)
    /// Counters kept elsewhere, each with the highest value read from it: a counter that goes away
    /// (a stopped relay reads 0) must not make the generation go back.
    private static let sources = Mutex<[(read: @Sendable () -> Int?, seen: Int)]>([])

    /// Notes one EMFILE or ENFILE.
    package static func note() {
        count.add(1, ordering: .relaxed)
    }

    /// Notes `error` when it is EMFILE or ENFILE; returns whether it was.
    @discardableResult
    package static func note(_ error: SystemError) -> Bool { note(errno: error.code) }

    /// Notes `code` when it is EMFILE or ENFILE; returns whether it was.
    @discardableResult
    package static func note(errno code: Int32) -> Bool {
        guard code == EMFILE || code == ENFILE else { return false }
        note()
        return true
    }

    /// Adds a counter kept elsewhere (the relay's own count of failed accepts and sockets); `source`
    /// returns nil once it is gone, and is then dropped with what it had counted kept.
    package static func register(_ source: @escaping @Sendable () -> Int?) {
        sources.withLock { $0.append((source, 0)) }
    }

    /// How many exhaustions were seen so far: compare two readings to tell whether one happened between them.
    package static var generation: Int {
        let kept = sources.withLock { sources -> Int in
            var total = 0
            var gone = 0
            for index in sources.indices {
                if let value = sources[index].read() {
                    sources[index].seen = max(sources[index].seen, value)
                } else {
                    gone += sources[index].seen
                    sources[index].seen = -1
                }
                total &+= max(0, sources[index].seen)
            }
            if gone > 0 {
                sources.removeAll { $0.seen < 0 }
                count.add(gone, ordering: .relaxed)
            }
            return total
        }
        return count.load(ordering: .relaxed) &+ kept
    }
}
