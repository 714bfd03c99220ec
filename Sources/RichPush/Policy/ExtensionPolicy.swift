/// How the emulated extension behaves: the device's budget, App Transport Security, caps.
///
/// Defaults are a current iPhone running Braze's service extension in an app without ATS
/// exceptions.
public struct ExtensionPolicy: Sendable {
    /// The APNs push type, which sets the payload size limit.
    public enum PushType: String, Sendable, CaseIterable {
        case alert, background, voip, complication, fileprovider, mdm, location, liveactivity, pushtotalk

        /// The largest payload APNs accepts for this push type, in bytes.
        public var maxPayloadBytes: Int { self == .voip ? 5120 : 4096 }

        /// Whether iOS hands a push of this type to a service extension: only an alert push displays a
        /// notification, and only a displayed notification is given to the extension to modify.
        public var runsServiceExtension: Bool { self == .alert }
    }

    /// The extension's time budget, one deadline for the whole run (download, sniff, store).
    public var budget: Duration = .seconds(30)
    /// The push type (`apns-push-type`): the size limit, and whether the extension runs at all.
    public var pushType: PushType = .alert
    /// Count caps in binary megabytes (2^20) instead of decimal (10^6, the default: stricter).
    public var binaryMegabytes = false
    /// Braze's advice for images, in bytes: a warning above it, not a failure.
    public var brazeImageAdvisoryBytes: Int64 = 5_000_000
    /// Download limits. `allowHTTP` here emulates an Info.plist that allows arbitrary loads.
    public var fetch = FetchPolicy()
    /// The app's extensions, from their Info.plist files (found in the app's folder, or given one by one):
    /// the service extension's App Transport Security replaces `fetch.allowHTTP`, and the content
    /// extensions decide the expanded view.
    public var app: AppConfiguration?
    /// Key-value pairs the content extensions read from the payload.
    public var requiredKeys: [RequiredKey] = []
    /// The SDK whose extension is emulated (`--sdk`); nil: Braze, and the outcomes say nothing of SDKs.
    public var dialect: DialectChoice? = nil
    /// Where the SDKs' own calls go, or how long they are modelled to take (`--sdk-endpoint`, `--sdk-latency`).
    public var sdkCalls = SDKCallPolicy()

    /// The phone judged: its iOS version and its extension's linked SDK (``DeviceVersion``), which
    /// decide how `URL(string:)` reads the media URL.
    public var device = DeviceVersion.standard

    public init() {}

    /// Apple's cap for a class, in bytes, in the configured megabytes.
    public func maxBytes(for attachmentClass: AttachmentClass) -> Int64 {
        attachmentClass.maxBytes(binaryMegabytes: binaryMegabytes)
    }
}
