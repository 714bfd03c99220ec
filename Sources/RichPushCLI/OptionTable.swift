import RichPush
import RichPushRuns

/// The options several commands share, each declared once as the typed ``Key`` commands read it
/// through: the extension, the app's files, downloads, the network mix, delivery tracking, outputs,
/// progress and thresholds. Options of one command are declared in that command's own type. A
/// default the help quotes is read from the library, where it is declared.
enum Keys {
    /// The library's defaults, quoted by the help.
    private static let policy = ExtensionPolicy()

    /// A default duration as the help quotes it: `10` (seconds) or `200` (milliseconds).
    static func shown(_ duration: Duration, in unit: Arguments.DurationUnit) -> String {
        let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        let number = value / unit.rawValue
        return number == number.rounded() ? String(Int(number)) : String(number)
    }

    // The extension's policy.
    /// `--budget`, whose default is the device's (30 s) except where a command says otherwise (demo: 5).
    static func budget(default seconds: Int? = nil) -> Key<Double?> {
        let device = shown(policy.budget, in: .seconds)
        return .duration(
            Option(
                .budget, "SECONDS",
                "The extension's time budget: one deadline for the whole run of a payload (default \(seconds.map(String.init) ?? device)"
                    + (seconds == nil ? ", as on the device)." : "; the device's is \(device))."),
                example: "5"), in: 0.001...3600, unit: .seconds)
    }
    static let pushType: Key<String?> = .text(
        Option(
            .pushType, "TYPE",
            "The apns-push-type: \(policy.pushType.rawValue) (default; the only type that runs the extension), voip (5120-byte limit, others "
                + "4096), background, liveactivity, location, complication, fileprovider, mdm or pushtotalk.",
            example: "voip"))
    static let ios: Key<String?> = .text(
        Option(
            .ios, "VERSION",
            "The phone's iOS version: 15, 16, 17 or 18, with a minor if you like (default \(DeviceVersion.standard.ios)). Before 17, "
                + "URL(string:) runs the RFC 1738/1808 parser: a media URL with a space, brace, quote, pipe or "
                + "non-ASCII character is nil and the plain notification shows. process takes 'all': one line per "
                + "version.", example: "16"))
    static let linkedSDK: Key<String?> = .text(
        Option(
            .linkedSDK, "VERSION",
            "The iOS SDK the service extension was built with (default: DTSDKName in --app's built Info.plist, "
                + "else the --ios version). An extension linked before 17 parses URLs the old way on every iOS.",
            example: "16"))
    /// `--junit FILE` for a command other than batch (whose cases are its payloads).
    static func junit(_ what: String) -> Key<String?> {
        .text(
            Option(
                "--junit", "FILE",
                "Also write a JUnit XML report: \(what), with the version and options in its properties ('-': stdout).",
                example: "junit.xml"))
    }
    static let metrics: Key<String?> = .text(
        Option(
            "--metrics", "FILE",
            "Also write the results as OpenMetrics text (gauges richpush_*: display ratio, verdicts, latency in "
                + "seconds, each threshold), for a Pushgateway or a textfile collector; '-' is stdout.",
            example: "metrics.txt"))
    static let summaryMarkdown: Key<String?> = .text(
        Option(
            "--summary-md", "FILE",
            "Also write a Markdown summary (the gate, the display rate, each threshold, the rows per network and "
                + "phone) for a CI job's page: --summary-md \"$GITHUB_STEP_SUMMARY\".", example: "summary.md"))

    /// `--ios-mix`: a phone drawn per device (bench) or payload (batch).
    static func iosMix(payloads: Bool) -> Key<String?> {
        let each = payloads ? "payload" : "device"
        return .text(
            Option(
                .iosMix, "MIX",
                "The campaign's audience: VERSION[@SDK]=PERCENT,... summing to 100 (18=60,17=25,16=10,15=5; 18@16 is "
                    + "an iOS 18 phone whose app's extension was built with the 16 SDK). Each \(each) is drawn a phone "
                    + "with --seed, as a push reaches one phone; the report gives the display rate per phone (JSON "
                    + "audience).", example: "17=75,16=25"))
    }
    static let audience: Key<String?> = .text(
        Option(
            .audience, "FILE", "The same as --ios-mix, read from FILE (commas or lines; '#' comments).",
            example: "audience.txt"))
    static let sdk: Key<String?> = .text(
        Option(
            "--sdk", "NAME",
            "Emulate this SDK's service extension: braze (default), onesignal, airship, firebase, iterable, clevertap, "
                + "customerio, klaviyo, moengage, expo, notifee, or auto (each payload's own keys; 'richpush sdk list'). "
                + "Outcomes then say the SDK, the file it wrote and what the user sees.",
            example: "onesignal"))
    static let sdkEndpoint: Key<String?> = .text(
        Option(
            "--sdk-endpoint", "URL",
            "Send the SDK's own calls (OneSignal's receipt, CleverTap's Notification Viewed, Customer.io's delivery metric) to this base URL: https, or "
                + "plain http to 127.0.0.1 ('richpush serve' answers them). Never a vendor's host by default.",
            example: "http://127.0.0.1:8080"))
    static let sdkLatency: Key<Double?> = .duration(
        Option(
            "--sdk-latency", "MS",
            "Without --sdk-endpoint, the modelled round trip of each SDK call (default \(shown(policy.sdkCalls.latency, in: .milliseconds))); a call display waits "
                + "for (Customer.io's) is waited.", example: "350"), in: 0...60_000, unit: .milliseconds)
    static let sdkReceipts: Key<Bool> = .flag(
        Option(
            "--sdk-receipts", nil,
            "Emulate the calls an app turns on: OneSignal's App Group receipt flag (its receipt, started with the "
                + "download and sent a whole 0-24 s after arrival) and CleverTap's recordNotificationViewedEventWithData: in the extension (Notification "
                + "Viewed, 1 s after arrival)."))
    static let binaryMegabytes: Key<Bool> = .flag(
        Option(
            .binaryMegabytes, nil, "Count Apple's size caps in 2^20-byte megabytes (default 10^6-byte ones)."))

    // The app's own files.
    static let app: Key<String?> = .text(
        Option(
            .app, "DIR",
            "Read the app's notification extensions from its source folder: every Info.plist whose "
                + "NSExtensionPointIdentifier is the service or a content extension (App Transport Security, and "
                + "which expanded view shows).", example: "Samples/app"))
    static let servicePlist: Key<String?> = .text(
        Option(
            .servicePlist, "FILE",
            "The service extension's Info.plist: its NSAppTransportSecurity decides every URL and redirect "
                + "(instead of --allow-http).", example: "Samples/app/NotificationService/Info.plist"))
    static let contentPlist: Key<[String]> = .list(
        Option(
            .contentPlist, "FILE", "A content extension's Info.plist (repeatable).",
            example: "Samples/app/NotificationContent/Info.plist"))
    static let requireKey: Key<[String]> = .list(
        Option(
            .requireKey, "[EXT:]KEY[=T]",
            "A key-value pair a content extension (EXT: its target folder; default: every one) reads from the "
                + "payload, of type T: string (default), number, bool or array (repeatable); a payload without it, "
                + "or with another type, gets the content-extension outcome would-crash.", example: "deep_link"))

    // Downloads.
    static let connectTimeout: Key<Double?> = .duration(
        Option(
            .connectTimeout, "SECONDS",
            "Time allowed for DNS, TCP and TLS (default \(shown(policy.fetch.connectTimeout, in: .seconds))).",
            example: "2"), in: 0.001...3600, unit: .seconds)
    static let allowHTTP: Key<Bool> = .flag(
        Option(
            .allowHTTP, nil,
            "Emulate an extension whose Info.plist allows arbitrary loads; without it, App Transport Security "
                + "blocks http:// URLs."))
    static let caFile: Key<String?> = .text(
        Option(
            .caFile, "FILE",
            "Trust this CA (PEM) besides the system's; verification is never off (the test CA is "
                + "Samples/certs/ca.pem). A file that is missing or holds no certificate stops the run (exit 65).",
            example: "Samples/certs/ca.pem"))
    static let connectTo: Key<[String]> = .list(
        Option(
            .connectTo, "H:P:H2:P2", "Send connections for H:P to H2:P2, as curl does (repeatable).",
            example: "cdn.example.com:443:127.0.0.1:8443"))
    static let maxRedirects: Key<Int?> = .number(
        Option(.maxRedirects, "N", "Redirects followed at most (default \(policy.fetch.maxRedirects)).", example: "2"),
        in: 0...50)
    static let maxBytes: Key<Int64?> = .number(
        Option(
            .maxBytes, "N", "Refuse bodies larger than N bytes (default: Apple's cap for the type).",
            example: "1000000"), in: 0...Int64.max)
    static let stallWindow: Key<Double?> = .duration(
        Option(
            .stallWindow, "SECONDS", "Fail when under 1 byte/s arrives for this long (default: off).",
            example: "3"), in: 1...3600, unit: .seconds)
    static let reuse: Key<Bool> = .flag(
        Option(
            .reuse, nil, "Share connections between downloads (default: a fresh connection each, as phones)."))
    static let header: Key<[String]> = .list(
        Option(
            "--header", "'NAME: VALUE'",
            "Send this request header (repeatable); it replaces the device's header of that name (User-Agent, "
                + "Accept, Accept-Language, Accept-Encoding) and 'NAME:' with no value removes it. CR, LF or NUL is "
                + "refused.", aliases: ["-H"], example: "X-Device: iPhone15,2"))
    static let userAgent: Key<String?> = .text(
        Option(
            "--user-agent", "TEXT",
            "The User-Agent sent (default CFNetwork's for the service extension's bundle, from --app: "
                + "NotificationService/1 CFNetwork/1496.0.7 Darwin/23.5.0, an iOS 17.5 device).",
            example: "MyApp/7 CFNetwork/1496.0.7 Darwin/23.5.0"))
    static let network: Key<String?> = .text(
        Option(
            .network, "PROFILE",
            "Download over an emulated network (3g, lte, edge, wifi, very-bad, ... or "
                + "down=2mbit,rtt=150ms,loss=1%,jitter=20ms); see 'richpush network list'.", example: "lte"))

    // The network mix.
    static let networkMix: Key<String?> = .text(
        Option(
            .networkMix, "MIX",
            "Give each device a built-in profile by share, drawn with --seed: 3g=20,lte=70,wifi=10 (percentages "
                + "summing to 100); the report breaks results down per profile. Not with --network.",
            example: "3g=20,lte=80"))
    static let seed: Key<UInt64?> = .number(
        Option(
            .seed, "N",
            "The seed of every random draw (the network mix, --jitter); default \(NetworkMix.defaultSeed), the same on a resume.",
            example: "7"), in: 0...UInt64.max)

    // Delivery tracking (Path A).
    static let trackEndpoint: Key<String?> = .text(
        Option(
            "--track-endpoint", "URL",
            "Log a delivery event per payload through URL/users/track (Braze's REST endpoint, or richpush "
                + "serve's), for the user in the payload's top-level braze_id; sent after the verdicts, 75 to a "
                + "request, within --budget in all. The key comes from --api-key-file FILE or BRAZE_REST_API_KEY, "
                + "never the command line.", example: "http://127.0.0.1:9/"))
    static let trackEvent: Key<String?> = .text(
        Option(
            "--track-event", "NAME", "The delivery event's name (default \(DeliveryTracking.defaultEventName)).",
            example: "delivered"))
    static let apiKeyFile: Key<String?> = .text(
        Option(
            .apiKeyFile, "FILE", "Read the REST API key from FILE (else BRAZE_REST_API_KEY).",
            example: "key.txt"))

    // Outputs and progress.
    static let fsync: Key<Bool> = .flag(
        Option(
            "--fsync", nil, "fsync each file before it gets its name (survives power loss; slower)."))
    static let progress: Key<Bool> = .flag(
        Option(
            "--progress", nil, "A progress line every second even when stderr is not a terminal (CI logs)."))
    static let noProgress: Key<Bool> = .flag(
        Option("--no-progress", nil, "No progress line."))

    // Thresholds (batch, bench, report merge).
    static func failUnder(devices: Bool) -> Key<Double?> {
        .number(
            Option(
                .failUnder, "PERCENT",
                "Shorthand for --threshold 'display>=PERCENT%': the least share of "
                    + (devices ? "devices" : "requested attachments") + " that must show.", example: "99"),
            in: 0...100)
    }
    /// `--threshold EXPR`, with the metrics of a bench or a batch.
    static func threshold(bench: Bool) -> Key<[String]> {
        .list(
            Option(
                .threshold, "EXPR",
                "A gate threshold, repeatable, as k6 writes them: METRIC OP NUMBER[UNIT], OP one of < <= > >= == !=. "
                    + (bench
                        ? "Rates in %: display, http_4xx, http_5xx, errors; end-to-end latency in ms or s: p50, p90, "
                            + "p95, p99; counts: would_crash, configuration_error, not_run, reason:CODE. Examples: "
                            + "'display>=99%', 'p95<800ms', 'http_5xx<1%', 'would_crash==0'. Defaults for the metrics "
                            + "none names: display>0%, would_crash==0, configuration_error==0."
                        : "Rates in %: display, errors (the payloads asking for an attachment that would not show "
                            + "it); counts: would_crash, configuration_error, not_run, reason:CODE. Example: "
                            + "'display>=99%'. Defaults for the metrics none names: display>=100%, would_crash==0, "
                            + "configuration_error==0.")
                    + " k6's spellings work too: "
                    + (bench ? "'p(95)<200' (ms), " : "") + "'rate<0.01' (errors as a fraction), "
                    + "'display:rate>=0.99'. Each is reported PASS/FAIL with its measured value; what never ran counts as "
                    + "not shown.",
                example: "would_crash==0"))
    }
    static let maxP99: Key<Double?> = .duration(
        Option(
            .maxP99, "MS", "Shorthand for --threshold 'p99<=MS': the highest p99 end-to-end latency.",
            example: "800"), in: 0.001...86_400_000, unit: .milliseconds)
}

extension OptionGroup {
    /// The extension's policy, with the budget's default of the command.
    static func extensionPolicy(budgetDefault: Int? = nil) -> OptionGroup {
        OptionGroup(
            "Extension options",
            [
                Keys.budget(default: budgetDefault), Keys.pushType, Keys.ios, Keys.linkedSDK, Keys.sdk,
                Keys.sdkEndpoint, Keys.sdkLatency, Keys.sdkReceipts, Keys.binaryMegabytes,
            ])
    }
    static let app = OptionGroup("App options", [Keys.app, Keys.servicePlist, Keys.contentPlist, Keys.requireKey])
    static let download = OptionGroup(
        "Download options",
        [
            Keys.connectTimeout, Keys.allowHTTP, Keys.caFile, Keys.connectTo, Keys.maxRedirects, Keys.maxBytes,
            Keys.stallWindow, Keys.reuse, Keys.header, Keys.userAgent, Keys.network,
        ])
    static let mix = OptionGroup("Network mix options", [Keys.networkMix, Keys.seed])
    static let tracking = OptionGroup(
        "Delivery tracking options", [Keys.trackEndpoint, Keys.trackEvent, Keys.apiKeyFile])
    static let output = OptionGroup("Output options", [Keys.fsync])
    static let progress = OptionGroup("Progress options", [Keys.progress, Keys.noProgress])

    /// The groups several commands share, in the order `docs/reference.md` shows them.
    static let shared: [OptionGroup] = [.extensionPolicy(), .download, .app, .mix, .tracking, .progress, .output]

    /// `richpush help options`: each shared group as a titled Markdown table (as `docs/reference.md` has them).
    static var sharedMarkdown: String {
        shared.map { "#### \($0.title)\n\n\($0.markdown)" }.joined(separator: "\n\n")
    }
}
