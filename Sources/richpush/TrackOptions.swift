import Foundation
import RichPush

/// Path A's options: `--track-endpoint URL` makes the emulated extension log a delivery event per
/// payload through `/users/track`, with the key from `--api-key-file FILE` or `BRAZE_REST_API_KEY`.
struct TrackOptions {
    static let help = """
          --track-endpoint URL    Log a delivery event per payload through URL/users/track (Braze's REST
                                  endpoint, or richpush serve's), for the user in the payload's top-level
                                  braze_id; sent after the verdicts, 75 to a request. The key comes from
                                  --api-key-file FILE or BRAZE_REST_API_KEY, never the command line.
                                  Sending them all takes at most --budget (a slow endpoint's events fail).
          --track-event NAME      The event's name (default rich_push_delivered).
        """

    /// The tracker, when `--track-endpoint` was given.
    var tracker: DeliveryTracker?
    /// The run's budget: the time all the delivery events get, together.
    var budget: Duration = .seconds(30)

    /// Reads the options; `policy` gives the budget, and the trust and host mappings the endpoint
    /// shares with downloads.
    init(parsing arguments: inout Arguments, policy: ExtensionPolicy) throws {
        let download = policy.fetch
        budget = policy.budget
        arguments = try AnalyticsFlushCommand.refusingKeyOnCommandLine(arguments)
        let base = try arguments.value("--track-endpoint")
        let name = try arguments.value("--track-event") ?? DeliveryTracking.defaultEventName
        let keyFile = try arguments.value("--api-key-file")
        guard let base else {
            if keyFile != nil { throw UsageError("--api-key-file goes with --track-endpoint URL") }
            return
        }
        do {
            var endpoint = try TrackEndpoint(base: base, apiKey: try AnalyticsFlushCommand.apiKey(file: keyFile))
            endpoint.caFile = download.caFile
            endpoint.connectTo = download.hostMappings.map(\.description)
            tracker = try DeliveryTracker(endpoint: endpoint, eventName: name)
        } catch let error as AnalyticsError {
            throw UsageError("--track-endpoint: \(error.message)")
        }
    }

    /// Sends what was recorded and prints what came of it on stderr.
    func flush() async -> DeliveryTracker.Report? {
        guard let tracker else { return nil }
        let report = await tracker.flush(within: budget)
        printError("richpush " + report.summaryLine.escapingControlCharacters)
        tracker.stop()
        return report
    }
}
