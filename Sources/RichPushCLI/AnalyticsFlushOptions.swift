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
        let endpointURL = try FlushConfiguration.requireEndpoint(try arguments.read(AnalyticsFlushCommand.endpoint))
        let user = try FlushConfiguration.user(
            externalID: try arguments.read(AnalyticsFlushCommand.externalID),
            brazeID: try arguments.read(AnalyticsFlushCommand.brazeID))
        configuration = FlushConfiguration(suite: suite, endpointURL: endpointURL, user: user)
        configuration.keyFile = try arguments.read(Keys.apiKeyFile)
        configuration.caFile = try arguments.read(Keys.caFile)
        configuration.connectTo = try arguments.read(Keys.connectTo)
        if let rate: Double = try arguments.read(AnalyticsFlushCommand.rate) {
            configuration.options.requestsPerSecond = rate
        }
        if let attempts: Int = try arguments.read(AnalyticsFlushCommand.attempts) {
            configuration.options.maxAttempts = attempts
        }
        if let base = try arguments.read(AnalyticsFlushCommand.backoff).map({
            Int($0.rounded())
        }) {
            configuration.options.backoffBase = .milliseconds(base)
        }
        if let timeout = try arguments.read(AnalyticsFlushCommand.timeout) {
            configuration.requestTimeout = .milliseconds(Int64(timeout * 1000))
        }
        json = try arguments.read(AnalyticsFlushCommand.json)
        verbose = try arguments.read(AnalyticsFlushCommand.verbose)
        try AnalyticsCommand.requireNoArgument(arguments)
    }
}
