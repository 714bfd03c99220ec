import Foundation
import RichPush
import RichPushServices

/// Path A's options: `--track-endpoint URL` makes the emulated extension log a delivery event per
/// payload through `/users/track`, with the key from `--api-key-file FILE` or `BRAZE_REST_API_KEY`.
///
/// Parsing only reads and checks them; ``start()`` starts the HTTP client, once the command has
/// checked everything else, so a usage error never leaves a client running.
struct TrackOptions {
    /// The endpoint, when `--track-endpoint` was given.
    var endpoint: TrackEndpoint?
    var eventName = DeliveryTracking.defaultEventName
    /// The tracker, once started.
    private(set) var tracker: DeliveryTracker?
    /// The run's budget: the time all the delivery events get, together.
    var budget: Duration = .seconds(30)

    /// Reads the options; `policy` gives the budget, and the trust and host mappings the endpoint
    /// shares with downloads.
    init(parsing arguments: inout Arguments, policy: ExtensionPolicy) throws {
        let download = policy.fetch
        budget = policy.budget
        let base = try arguments.read(Keys.trackEndpoint)
        eventName = try arguments.read(Keys.trackEvent) ?? DeliveryTracking.defaultEventName
        let keyFile = try arguments.read(Keys.apiKeyFile)
        guard let base else {
            if keyFile != nil { throw UsageError("--api-key-file goes with --track-endpoint URL") }
            return
        }
        do {
            var endpoint = try TrackEndpoint(base: base, apiKey: try APIKey.resolve(file: keyFile))
            endpoint.caFile = download.caFile
            endpoint.connectTo = download.hostMappings
            self.endpoint = endpoint
        } catch let error as AnalyticsError {
            throw UsageError("--track-endpoint: \(error.message)")
        }
    }

    /// Starts the tracker's HTTP client, when an endpoint was given.
    mutating func start() throws -> DeliveryTracker? {
        guard let endpoint else { return nil }
        do throws(AnalyticsError) { tracker = try DeliveryTracker(endpoint: endpoint, eventName: eventName) } catch {
            throw CommandFailure(.unavailable, "--track-endpoint: \(error.message)")
        }
        return tracker
    }

    /// Sends what was recorded and prints what came of it on stderr.
    func flush() async -> DeliveryTracker.Report? {
        guard let tracker else { return nil }
        let report = await tracker.flush(within: budget)
        printError("richpush " + report.summaryLine.escapingControlCharacters)
        tracker.stop()
        return report
    }

    /// Stops the client without sending (a run that failed before any payload).
    func stop() { tracker?.stop() }
}
