import Foundation
import POSIXKit
import RichPush

/// Everything a bench run is told: its target, its devices and their arrivals, its limits and thresholds.
///
/// The command line fills one from its options; `init(devices:payload:url:type:arrival:ramp:rate:serving:)`
/// checks the choices that exclude each other before anything starts, and ``BenchSession`` runs it.
///
/// ```swift
/// var configuration = try BenchConfiguration(
///     devices: 2000, payload: nil, url: "https://127.0.0.1:8443/hero.jpg", type: nil,
///     arrival: nil, ramp: 5, rate: nil, serving: false)
/// configuration.concurrency = 500
/// ```
public struct BenchConfiguration: Sendable {
    /// How devices arrive.
    public enum Arrival: Sendable, Equatable {
        /// Every device at once.
        case burst
        /// Arrivals spread evenly over this many seconds.
        case ramp(seconds: Double)
        /// Arrivals at a fixed rate per second.
        case rate(perSecond: Double)

        /// The model the schedule draws arrivals from.
        package var model: ArrivalSchedule.Model {
            switch self {
            case .burst: .burst
            case .ramp(let seconds): .ramp(.milliseconds(Int64(seconds * 1000)))
            case .rate(let perSecond): .rate(perSecond)
            }
        }

        /// `burst`, `ramp` or `rate`, as the report names it.
        public var name: String {
            switch self {
            case .burst: "burst"
            case .ramp: "ramp"
            case .rate: "rate"
            }
        }
    }

    /// The payload file every device receives.
    public var payloadPath: String?
    /// The URL of the asset a payload is made for; it may be a `URLTemplate`.
    public var url: String?
    /// The file of URLs (and weights) devices draw from (`URLList`), instead of one ``url``.
    public var urlsPath: String?
    /// The `ab.att.type` of the payload made for ``url`` (default: its extension).
    public var declaredType: String?
    /// Devices in the whole run (every shard).
    public var devices: Int
    public var arrival: Arrival
    /// Each arrival is delayed by a random 0 to this many seconds.
    public var jitterSeconds: Double = 0
    /// The seed of the jitter and the network mix.
    public var seed: UInt64 = NetworkMix.defaultSeed
    /// Devices in flight at most.
    public var concurrency = Self.defaultConcurrency
    /// Devices in flight when none is given.
    package static let defaultConcurrency = 1000
    /// The output folder the stored attachments are kept in (nil: keep nothing).
    public var keepFolder: String?
    /// No device is launched after this many seconds (nil: the schedule plus the budget plus 60 s).
    public var timeLimitSeconds: Double?
    /// The gate's thresholds (the defaults apply to every metric these do not name; see ``Gate``).
    package var thresholds: [Threshold] = []
    /// The user owns the target host: it may be another machine.
    public var ownsHost = false
    /// Whether one trial download checks the target before the burst.
    public var preflight = true
    package var shard = Shard.whole
    /// The moment every shard starts its schedule (`--start-at`), or nil to start at once.
    package var startAt: SharedStart?
    /// The extension every device runs.
    public var policy = ExtensionPolicy()
    /// A network profile per device, by share.
    package var networkMix: NetworkMix?
    /// The phones devices are drawn from (`--ios-mix`), or nil: every device on the policy's own.
    package var audience: AudienceMix?
    /// Path A: a delivery event per device, when given.
    package var tracker: DeliveryTracker?

    /// `devices` devices that all download `url` at once (a burst), each on its own connection.
    public init(url: String, devices: Int) throws(ConfigurationError) {
        try self.init(
            devices: devices, payload: nil, url: url, type: nil, arrival: nil, ramp: nil, rate: nil, serving: false)
    }

    /// A configuration whose target and arrival model are consistent; `serving` says the embedded
    /// server will give the target (see ``serve(httpsPort:caFile:)``), so neither is required then.
    public init(
        devices: Int, payload: String?, url: String?, type: String?, arrival: String?, ramp: Double?, rate: Double?,
        serving: Bool, urls: String? = nil
    ) throws(ConfigurationError) {
        guard [payload != nil, url != nil, urls != nil].filter({ $0 }).count <= 1 else {
            throw ConfigurationError(
                .invalidCombination, "give one of \(Setting.payload), \(Setting.url) or \(Setting.urls)")
        }
        let models = [arrival != nil && arrival != "burst", ramp != nil, rate != nil].filter { $0 }.count
        guard models <= 1, arrival == nil || arrival == "burst" else {
            throw ConfigurationError(
                .invalidCombination,
                "choose one arrival model: \(Setting.arrival) burst, \(Setting.ramp) SECONDS or \(Setting.rate) PER_SECOND"
            )
        }
        if !serving, let url, let corrected = BenchPreflight.correctedURL(url) {
            throw ConfigurationError.invalid(.url, "\(url) has no scheme: did you mean \(Setting.url) \(corrected) ?")
        }
        guard serving || payload != nil || url != nil || urls != nil else {
            throw ConfigurationError(
                .invalidCombination,
                "a bench needs a target: \(Setting.payload) FILE, \(Setting.url) URL or \(Setting.urls) FILE")
        }
        // A path on the embedded server becomes its URL later (serve(httpsPort:caFile:)), and is read then.
        if let url, Self.hasScheme(url) { _ = try URLTemplate(url) }
        self.devices = devices
        payloadPath = payload
        self.url = url
        urlsPath = urls
        declaredType = type
        self.arrival = ramp.map { .ramp(seconds: $0) } ?? rate.map { .rate(perSecond: $0) } ?? .burst
    }

    /// The host the embedded server stands in for.
    public static let servedHost = "cdn.example.com"

    /// Points the run at the embedded server on `httpsPort`: `cdn.example.com` maps to it, its CA is
    /// trusted (unless another was given), and a ``url`` without a scheme (default `hero.jpg`) is a
    /// path on it.
    public mutating func serve(httpsPort: Int, caFile: String) {
        policy.fetch.caFile = policy.fetch.caFile ?? caFile
        policy.fetch.hostMappings.append(
            HostMapping(host: Self.servedHost, port: "443", targetHost: "127.0.0.1", targetPort: "\(httpsPort)"))
        serving = true
        guard payloadPath == nil, urlsPath == nil else { return }
        url = Self.servedURL(url ?? "hero.jpg")
    }

    /// Whether ``serve(httpsPort:caFile:)`` pointed the run at the embedded server: a list's paths are its URLs.
    public private(set) var serving = false

    /// Whether `text` starts with a scheme (`://` before any query or fragment), not a path on the server.
    static func hasScheme(_ text: String) -> Bool {
        text.prefix(while: { $0 != "?" && $0 != "#" }).contains("://")
    }

    /// A path on the embedded server as its URL; a URL (a scheme before any query) as it is.
    static func servedURL(_ path: String) -> String {
        hasScheme(path)
            ? path : "https://\(Self.servedHost)/" + (path.hasPrefix("/") ? String(path.dropFirst()) : path)
    }

    /// The URLs devices draw from: the ``urlsPath`` file's, or ``url`` when it is a template; nil when
    /// every device requests one URL (or receives the ``payloadPath`` payload).
    package func urlList() throws(ConfigurationError) -> URLList? {
        var list: URLList
        if let urlsPath {
            list = try URLList.read(urlsPath, seed: seed)
        } else if let url, try URLTemplate(url).isTemplate {
            list = try URLList(single: url, seed: seed)
        } else {
            return nil
        }
        if serving { try list.mapURLs(Self.servedURL) }
        for entry in list.entries where !Self.hasScheme(entry.template.representative) {
            let place = list.file.map { "\($0) line \(entry.line): " } ?? ""
            throw ConfigurationError(
                .unusableInput,
                "\(place)\(entry.template.text.escapingControlCharacters) has no scheme: give a whole URL (https://...)",
                setting: list.file == nil ? .url : .urls)
        }
        return list
    }

    /// The payload made for one URL, and its attachment type (``declaredType``, or the URL's extension).
    public func payload(for url: String) throws(ConfigurationError) -> (bytes: [UInt8], type: String) {
        let type = declaredType ?? URL(string: url)?.pathExtension ?? ""
        guard AttachmentFormat.forExtension(type) != nil else {
            throw ConfigurationError(
                .invalidCombination,
                "cannot tell the attachment type of \(url): give \(Setting.type) (jpg, png, gif, mp3, mp4, ...)")
        }
        let body: JSONValue = .object([
            (
                "aps",
                .object([
                    ("alert", .object([("title", .string("richpush bench"))])), ("mutable-content", .number("1")),
                ])
            ),
            ("ab", .object([("att", .object([("url", .string(url)), ("type", .string(type))]))])),
        ])
        return (body.utf8, type)
    }

    /// The payload every device receives and the target the report names, from ``payloadPath`` or ``url``.
    package func payload() throws(ConfigurationError) -> (bytes: [UInt8], target: BenchReport.Target) {
        if let payloadPath {
            guard let data = FileManager.default.contents(atPath: payloadPath) else {
                throw ConfigurationError(.unusableInput, "cannot read \(payloadPath)", setting: .payload)
            }
            let bytes = Array(data)
            var dialect = Dialect.braze
            switch policy.dialect {
            case .fixed(let fixed)?: dialect = fixed
            case .auto?: dialect = (try? JSONValue.parse(bytes)).map(DialectDetection.detect) ?? .braze
            case nil: break
            }
            guard
                case .media(let items, _, _) = PayloadInspector.inspect(
                    bytes, pushType: policy.pushType, dialect: dialect),
                let first = items.first
            else {
                throw ConfigurationError(
                    .unusableInput,
                    "\(payloadPath) does not request an attachment; run it through the extension alone to see why",
                    setting: .payload)
            }
            let (attURL, type) = (first.url, first.declared ?? "")
            return (bytes, BenchReport.Target(url: attURL, type: type, payload: payloadPath))
        }
        if let list = try urlList() {
            // The first entry stands for the list in the report's target and the trial download.
            let first = list.entries[0].template
            // The trial download of a template requests a URL no device does (its device is -1), so it
            // warms no cache for a device; a plain URL's trial is one request for that URL.
            let trialURL = first.isTemplate ? first.expand(device: -1, shard: shard.index, seed: seed) : first.text
            let (bytes, type) = try payload(for: trialURL)
            var target = BenchReport.Target(url: first.text, type: type, payload: nil)
            target.urls = list.file
            return (bytes, target)
        }
        guard let url else {
            throw ConfigurationError(
                .invalidCombination, "a bench needs a target: \(Setting.payload) FILE or \(Setting.url) URL")
        }
        let (bytes, type) = try payload(for: url)
        return (bytes, BenchReport.Target(url: url, type: type, payload: nil))
    }

    /// Refuses a list whose entries are not all on this machine unless ``ownsHost`` says they may be
    /// loaded (each entry judged once: a template's placeholders never reach its host).
    package func checkHosts(_ list: URLList) throws(ConfigurationError) {
        guard !ownsHost else { return }
        for entry in list.entries {
            let url = entry.template.representative
            guard EndpointRule.isLoopback(url: url, mappings: policy.fetch.hostMappings) else {
                let place = list.file.map { "\($0) line \(entry.line): " } ?? ""
                throw ConfigurationError(
                    .invalidCombination,
                    "\(place)\(entry.template.text.escapingControlCharacters) is not on this machine. A bench sends a burst of requests: pass "
                        + "\(Setting.ownsHost) to confirm you own that host and may load it.")
            }
        }
    }

    /// Refuses a target that is not on this machine unless ``ownsHost`` says it may be loaded.
    package func checkHost(_ target: BenchReport.Target) throws(ConfigurationError) {
        guard ownsHost || EndpointRule.isLoopback(url: target.url, mappings: policy.fetch.hostMappings) else {
            throw ConfigurationError(
                .invalidCombination,
                "\(target.url) is not on this machine. A bench sends a burst of requests: pass \(Setting.ownsHost) "
                    + "to confirm you own that host and may load it.")
        }
    }

    /// What the burst holds open: a socket per device in flight, two more each through the network
    /// profiles' relay, and a temporary file each when attachments are kept (``keepFolder``).
    package var descriptorNeed: DescriptorBudget.Need {
        DescriptorBudget.Need(
            concurrency: min(concurrency, devices), relayed: policy.fetch.network != nil || networkMix != nil,
            storing: keepFolder != nil, profiles: networkMix?.entries.count ?? 1)
    }

    /// Refuses a concurrency the process cannot hold open files for: `too-few-descriptors`, with the numbers
    /// and the fix.
    package func checkDescriptors(_ budget: DescriptorBudget) throws(ConfigurationError) {
        if let shortfall = budget.shortfall(descriptorNeed, setting: .concurrency) {
            throw ConfigurationError(.tooFewDescriptors, shortfall)
        }
    }

    /// The digest of what decides this run's verdicts and measurements, the same on every shard:
    /// the extension's options, the target and the schedule (not the shard, paths or local ports).
    package func optionsDigest(target: BenchReport.Target) -> String {
        let config = reportConfig
        return BatchPreflight.verdictDigest(
            of: policy,
            extra: [
                "target": "\(target.url) \(target.type)", "devices": String(config.devices),
                "arrival": "\(config.arrival) \(config.rampSeconds ?? 0) \(config.ratePerSecond ?? 0)",
                "jitter": String(config.jitterSeconds), "seed": String(config.seed),
                "connections": config.connections, "network": config.network ?? "none",
                "network-mix": config.networkMix ?? "none", "ios-mix": config.iosMix ?? "none",
                "urls": (try? urlList())?.entries.map { "\($0.template.text) \($0.weight)" }.joined(separator: "\n")
                    ?? "none",
            ])
    }

    /// The report's record of this configuration.
    package var reportConfig: BenchReport.Config {
        var ramp: Double?
        var rate: Double?
        switch arrival {
        case .burst: break
        case .ramp(let seconds): ramp = seconds
        case .rate(let perSecond): rate = perSecond
        }
        var config = BenchReport.Config(
            devices: devices, arrival: arrival.name, rampSeconds: ramp, ratePerSecond: rate,
            jitterSeconds: jitterSeconds, seed: seed, concurrency: concurrency,
            connections: policy.fetch.connections.rawValue, budgetSeconds: policy.budget.inSeconds,
            shardCount: shard.count)
        config.network = policy.fetch.network?.name
        config.networkMix = networkMix.map { mix in
            mix.entries.map { "\(NetworkAssignment.key($0.profile))=\($0.percent)" }.joined(separator: ",")
        }
        config.iosMix = audience?.description
        return config
    }
}
