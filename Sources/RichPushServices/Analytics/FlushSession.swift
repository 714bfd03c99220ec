import RichPush

/// One `richpush analytics flush`: the `/users/track` client for a ``FlushConfiguration``, the flush,
/// and what the command line prints and returns for its summary.
///
/// ```swift
/// let session = try FlushSession(configuration)
/// defer { session.close() }
/// if case .success(let summary) = await session.flush() { print(summary.textLines.joined(separator: "\n")) }
/// ```
package final class FlushSession: Sendable {
    /// What the session was told.
    package let configuration: FlushConfiguration
    private let client: TrackClient

    /// Checks the configuration (``FlushConfiguration/endpoint(environment:)``) and starts the client;
    /// a client that cannot start is `unavailable`.
    package init(_ configuration: FlushConfiguration) throws(ConfigurationError) {
        self.configuration = configuration
        let endpoint = try configuration.endpoint()
        do throws(AnalyticsError) { client = try TrackClient(endpoint: endpoint) } catch {
            throw ConfigurationError(.unavailable, error.message)
        }
    }

    /// Stops the client; call once, after the flush.
    package func close() { client.stop() }

    /// A session for `body` alone: its client is stopped when `body` returns or throws.
    package static func with<T>(_ configuration: FlushConfiguration, _ body: (FlushSession) async throws -> T)
        async throws -> T
    {
        let session = try FlushSession(configuration)
        defer { session.close() }
        return try await body(session)
    }

    /// Claims, sends and accounts (``AnalyticsFlush/run(suite:client:options:progress:)``); fails only
    /// when the suite or outbox cannot be read or written, or another flush holds the suite.
    package func flush(progress: @escaping @Sendable (String) -> Void = { _ in }) async -> Result<
        FlushSummary, AnalyticsError
    > {
        do throws(AnalyticsError) {
            return .success(
                try await AnalyticsFlush.run(
                    suite: configuration.suite, client: client, options: configuration.options, progress: progress))
        } catch {
            return .failure(error)
        }
    }

    /// Forgets the unacknowledged items `summary` reported, once it has been shown (best effort: a
    /// failure only means the next flush warns about them again).
    package func markReported(_ summary: FlushSummary) {
        try? AnalyticsFlush.markReported(summary, suite: configuration.suite)
    }
}
