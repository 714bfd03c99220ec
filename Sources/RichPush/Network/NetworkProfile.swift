/// The link a phone downloads over: rates, delays, jitter and loss, as the shaping relay applies them.
///
/// The built-in profiles follow the presets of Apple's Network Link Conditioner, whose delays are
/// per direction (so 3G's 100 ms each way is a 200 ms round trip). A custom profile is written
/// `down=2mbit,rtt=150ms,loss=1%,jitter=20ms` (see ``parse(_:)``).
///
/// ```swift
/// let profile = try NetworkProfile(parsing: "3g")
/// print(profile.roundTrip)  // 200 ms
/// ```
public struct NetworkProfile: Sendable, Hashable, CustomStringConvertible {
    /// The name it is selected by: a built-in's (`3g`) or the custom text as given.
    public var name: String
    /// A name for people and reports (`3G`, `custom`).
    public var title: String
    /// Rate from the server to the phone, in bits per second.
    public var downBitsPerSecond: Int64
    /// Rate from the phone to the server, in bits per second.
    public var upBitsPerSecond: Int64
    /// One-way delay from the server to the phone.
    public var downDelay: Duration
    /// One-way delay from the phone to the server.
    public var upDelay: Duration
    /// Extra delay per segment, uniform between zero and this, in each direction.
    public var jitter: Duration
    /// Share of segments lost, from 0 up to (not including) 1.
    public var loss: Double

    public init(
        name: String, title: String, downBitsPerSecond: Int64, upBitsPerSecond: Int64, downDelay: Duration,
        upDelay: Duration, jitter: Duration = .zero, loss: Double = 0
    ) {
        self.name = name
        self.title = title
        self.downBitsPerSecond = downBitsPerSecond
        self.upBitsPerSecond = upBitsPerSecond
        self.downDelay = downDelay
        self.upDelay = upDelay
        self.jitter = jitter
        self.loss = loss
    }

    /// The round trip: both one-way delays.
    public var roundTrip: Duration { downDelay + upDelay }

    /// What a lost segment costs: about one retransmission timeout, max(200 ms, 2 x RTT).
    ///
    /// A relay cannot drop bytes from a TCP stream, so it delays the "lost" segment (and, in order,
    /// everything behind it) by the time the sender would take to notice and resend it.
    public var retransmissionTimeout: Duration { max(.milliseconds(200), roundTrip * 2) }

    public var description: String { name }

    /// The profiles richpush knows by name, in the order `network list` prints them.
    public static let builtIn: [NetworkProfile] = [
        NetworkProfile(
            name: "edge", title: "Edge", downBitsPerSecond: 240_000, upBitsPerSecond: 200_000,
            downDelay: .milliseconds(400), upDelay: .milliseconds(440)),
        NetworkProfile(
            name: "3g", title: "3G", downBitsPerSecond: 780_000, upBitsPerSecond: 330_000,
            downDelay: .milliseconds(100), upDelay: .milliseconds(100)),
        NetworkProfile(
            name: "dsl", title: "DSL", downBitsPerSecond: 2_000_000, upBitsPerSecond: 256_000,
            downDelay: .milliseconds(5), upDelay: .milliseconds(5)),
        NetworkProfile(
            name: "lte", title: "LTE", downBitsPerSecond: 50_000_000, upBitsPerSecond: 10_000_000,
            downDelay: .milliseconds(50), upDelay: .milliseconds(65)),
        NetworkProfile(
            name: "wifi", title: "Wi-Fi", downBitsPerSecond: 40_000_000, upBitsPerSecond: 33_000_000,
            downDelay: .milliseconds(1), upDelay: .milliseconds(1)),
        NetworkProfile(
            name: "very-bad", title: "Very Bad Network", downBitsPerSecond: 1_000_000, upBitsPerSecond: 1_000_000,
            downDelay: .milliseconds(500), upDelay: .milliseconds(500), loss: 0.10),
    ]

    /// The built-in profile called `name` (case-insensitive; `wi-fi` and `verybad` are accepted too).
    public static func named(_ name: String) -> NetworkProfile? {
        let key = name.lowercased()
        let canonical =
            switch key {
            case "wi-fi": "wifi"
            case "verybad", "very-bad-network": "very-bad"
            case "4g": "lte"
            default: key
            }
        return builtIn.first { $0.name == canonical }
    }
}
