import Foundation
import RichPush

/// The options of every command that runs the extension: its budget, push type, size caps, and
/// the download options (``TLSOptions``).
///
/// ```swift
/// var arguments = Arguments(["--budget", "5", "--cacert", "ca.pem"])
/// let policy = try PolicyOptions(parsing: &arguments).policy   // an ExtensionPolicy
/// ```
struct PolicyOptions {
    /// The extension policy the options describe.
    var policy = ExtensionPolicy()
    /// Whether `--budget` was given (a command with another default keeps the user's).
    var budgetGiven = false
    /// `--ios all` (only where `allowsEveryVersion`): judge the payload on every version.
    var everyVersion = false

    /// Reads the options out of `arguments`; `allowsEveryVersion` accepts `--ios all` (process).
    init(parsing arguments: inout Arguments, allowsEveryVersion: Bool = false) throws {
        if let seconds = try arguments.read(Keys.budget()) {
            policy.budget = .milliseconds(Int64(seconds * 1000))
            budgetGiven = true
        }
        if let type = try arguments.read(Keys.pushType) {
            guard let pushType = ExtensionPolicy.PushType(rawValue: type.lowercased()) else {
                throw UsageError(
                    "--push-type takes one of \(ExtensionPolicy.PushType.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            policy.pushType = pushType
        }
        if let name = try arguments.read(Keys.sdk) {
            guard let choice = DialectChoice(name: name) else {
                throw UsageError(
                    "--sdk takes one of \(DialectChoice.names.joined(separator: ", ")), not '\(name.escapingControlCharacters)'"
                )
            }
            policy.dialect = choice
        }
        if let endpoint = try arguments.read(Keys.sdkEndpoint) {
            if let problem = EndpointRule.problem(with: endpoint) {
                throw UsageError("--sdk-endpoint '\(endpoint.escapingControlCharacters)' \(problem)")
            }
            policy.sdkCalls.endpoint = endpoint
        }
        if let milliseconds = try arguments.read(Keys.sdkLatency) {
            policy.sdkCalls.latency = .milliseconds(Int64(milliseconds))
        }
        policy.sdkCalls.receipts = try arguments.read(Keys.sdkReceipts)
        policy.binaryMegabytes = try arguments.read(Keys.binaryMegabytes)
        let download = try TLSOptions(parsing: &arguments)
        policy.fetch = download.policy
        try readApp(&arguments)
        var iosText = try arguments.read(Keys.ios)
        if iosText?.lowercased() == "all" {
            guard allowsEveryVersion else {
                throw UsageError("--ios all is for 'richpush process' (one payload on every version); give one version")
            }
            everyVersion = true
            iosText = nil
        }
        let ios = try iosText.map { text in
            guard let version = IOSVersion(parsing: text) else { throw Self.versionError("--ios", text) }
            return version
        }
        let linked = try arguments.read(Keys.linkedSDK).map { text in
            guard let version = IOSVersion(parsing: text) else { throw Self.versionError("--linked-sdk", text) }
            return version
        }
        if everyVersion, linked != nil {
            throw UsageError(
                "--ios all judges each version built with its own SDK, and one older build; leave --linked-sdk out")
        }
        if ios != nil || linked != nil || policy.app?.linkedSDK != nil {
            let phone = ios ?? DeviceVersion.standard.ios
            policy.device = DeviceVersion(ios: phone, linkedSDK: linked ?? policy.app?.linkedSDK ?? phone)
        }
        if !download.userAgentGiven, policy.device != .standard || policy.app?.servicePlist != nil {
            policy.fetch.userAgent =
                DeviceUserAgent(
                    bundleName: policy.app?.bundleName, bundleVersion: policy.app?.bundleVersion, ios: policy.device.ios
                ).description
        }
    }

    /// The usage error for a version richpush cannot judge.
    static func versionError(_ option: String, _ text: String) -> UsageError {
        UsageError(
            "\(option) '\(text.escapingControlCharacters)' is not an iOS version richpush has facts for: give "
                + IOSVersion.supportedMajors.map(String.init).joined(separator: ", ")
                + ", optionally with a minor (17.5)")
    }

    /// `--app`, `--service-plist`, `--content-plist`, `--require-key`: a plist or folder that cannot be
    /// used is unusable input (65) naming the file and the problem; a plist given to the wrong option,
    /// or a malformed option, is a usage error (64).
    private mutating func readApp(_ arguments: inout Arguments) throws {
        let folder = try arguments.read(Keys.app)
        let service = try arguments.read(Keys.servicePlist)
        let contents = try arguments.read(Keys.contentPlist)
        let keys = try arguments.read(Keys.requireKey)
        do {
            policy.requiredKeys = try keys.map { text throws(AppConfigurationError) in try RequiredKey(parsing: text) }
            guard folder != nil || service != nil || !contents.isEmpty else {
                if !keys.isEmpty {
                    throw UsageError(
                        "--require-key needs the content extensions: give --app DIR or --content-plist FILE")
                }
                return
            }
            var app = AppConfiguration()
            if let folder { app = try AppConfiguration.scan(folder: folder) }
            let given = try AppConfiguration(servicePlist: service, contentPlists: contents)
            if given.servicePlist != nil {
                app.servicePlist = given.servicePlist
                app.transportSecurity = given.transportSecurity
                app.bundleName = given.bundleName
                app.bundleVersion = given.bundleVersion
            }
            app.contentExtensions += given.contentExtensions
            if app.servicePlist != nil && policy.fetch.allowHTTP {
                throw UsageError(
                    "--allow-http and a service extension plist both set App Transport Security: give one "
                        + "(--allow-http stands for NSAllowsArbitraryLoads)")
            }
            policy.app = app
        } catch let error as AppConfigurationError {
            // A file or folder that cannot be used is unusable input (65); a wrong option is a usage error (64).
            guard error.code == .unusableInput else { throw UsageError(error.description) }
            throw CommandFailure(.dataError, error.description)
        }
    }
}
