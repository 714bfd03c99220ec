import RichPush

/// What one emulated device lived through, as the burst runner records it.
package struct DeviceResult: Sendable {
    package var verdict: Verdict
    package var reason: ReasonCode
    /// The outcome's message, kept as the sample for its reason.
    package var message: String?
    /// The HTTP status of the response; 0 when no response came (DNS, connect or TLS failed, no download).
    package var status: Int
    package var bytes: Int64
    /// Download milestones (cumulative from the transfer's start), when a download happened. A zero
    /// milestone was never reached.
    package var dns: Duration?, connect: Duration?, tls: Duration?, firstByte: Duration?, download: Duration?
    /// Offsets from the start of the run: when the push was scheduled to arrive, when the device
    /// actually started (later when the client's own concurrency cap held it back), when it ended.
    package var scheduled: Duration, started: Duration, ended: Duration
    /// Whether the concurrency cap delayed the start.
    package var heldBack: Bool
    /// How late the device started against the moment it was free to start (its arrival, or the moment
    /// the concurrency cap let it go): the client's own scheduling lag, not the host's.
    package var schedulingLag: Duration
    /// The network profile the device downloaded over (its report key, `3g`); nil over loopback.
    package var network: String?
    /// The expanded view the device's app would show, or nil when the app is not known.
    package var contentExtension: ContentOutcome.Kind?
    /// The SDK's own calls the device made (`--sdk`): their latency goes beside the CDN's in the report.
    package var sdkCalls: [SDKCallReport] = []
    /// The device's position in the whole run (the schedule's index, the same on every shard).
    package var index = 0
    /// The entry of the run's URL list the device requested (0 with one URL or a payload).
    package var entry = 0
    /// The phone's row in the audience (`DeviceVersion.key`), nil without one.
    package var phone: String?
    /// The URL it requested, when a per-device log asked for it (a template expanded); nil otherwise.
    package var url: String?
    /// What the response's cache headers said.
    package var cache = CacheResult.none
    /// The HTTP version of the response ("1.1", "2"; "" when none arrived).
    package var httpVersion = ""
    /// New connections the device opened (0: it reused one, or never connected).
    package var connectionsMade = 0

    package init(
        verdict: Verdict, reason: ReasonCode, message: String? = nil, status: Int = 0, bytes: Int64,
        dns: Duration? = nil, connect: Duration? = nil, tls: Duration? = nil, firstByte: Duration? = nil,
        download: Duration? = nil, scheduled: Duration, started: Duration, ended: Duration, heldBack: Bool = false,
        schedulingLag: Duration = .zero, network: String? = nil
    ) {
        self.verdict = verdict
        self.reason = reason
        self.message = message
        self.status = status
        self.bytes = bytes
        self.dns = dns
        self.connect = connect
        self.tls = tls
        self.firstByte = firstByte
        self.download = download
        self.scheduled = scheduled
        self.started = started
        self.ended = ended
        self.heldBack = heldBack
        self.schedulingLag = schedulingLag
        self.network = network
    }
}
