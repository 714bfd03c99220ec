import RichPush
import RichPushServices

/// The options of `richpush analytics flush`, read into a ``FlushConfiguration``, and how the summary
/// is shown (`--json`, `--verbose`).
struct AnalyticsFlushOptions {
    var configuration: FlushConfiguration
    /// `--json`: the summary as JSON on stdout.
    var json: Bool
    /// `--verbose`: each request's outcome on stderr.
    var verbose: Bool

    /// Reads every option out of `arguments`, checking the key is not on the command line, the suite,
    /// the endpoint and the user first; a mistake is a usage error (64).
    init(parsing arguments: inout Arguments) throws {
        let suite = try AnalyticsCommand.suite(&arguments)
        let endpointURL = try FlushConfiguration.requireEndpoint(try arguments.value("--endpoint"))
        let user = try FlushConfiguration.user(
            externalID: try arguments.value("--external-id"), brazeID: try arguments.value("--braze-id"))
        configuration = FlushConfiguration(suite: suite, endpointURL: endpointURL, user: user)
        configuration.keyFile = try arguments.value("--api-key-file")
        configuration.caFile = try arguments.value("--cacert")
        configuration.connectTo = try arguments.values("--connect-to")
        if let rate: Double = try arguments.number("--rate", in: 0.01...1_000_000) {
            configuration.options.requestsPerSecond = rate
        }
        if let attempts: Int = try arguments.number("--attempts", in: 1...100) {
            configuration.options.maxAttempts = attempts
        }
        if let base = try arguments.duration("--backoff", in: 0...600_000, unit: .milliseconds).map({
            Int($0.rounded())
        }) {
            configuration.options.backoffBase = .milliseconds(base)
        }
        if let timeout = try arguments.duration("--timeout", in: 0.01...3600, unit: .seconds) {
            configuration.requestTimeout = .milliseconds(Int64(timeout * 1000))
        }
        json = arguments.flag("--json")
        verbose = arguments.flag("--verbose")
        try AnalyticsCommand.requireNoArgument(arguments)
    }
}
