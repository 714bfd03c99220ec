import RichPush

extension FlushSummary {
    /// The summary as `analytics flush` prints it on stdout, one line each: the counts, each rejected
    /// item, and a warning when items may have reached the endpoint twice. Payload text is escaped.
    package var text: String {
        var lines = [
            "items read \(itemsRead) (\(resumed) resumed from the outbox), requests sent \(requestsSent), accepted "
                + "\(accepted), retried \(retried), rejected \(rejected.count), left pending \(leftPending)"
        ]
        for item in rejected {
            lines.append(
                "rejected: \(item.kind.rawValue) \(item.name ?? "-") (\(item.source)): \(item.reason)"
                    .escapingControlCharacters)
        }
        if !unacknowledged.isEmpty {
            lines.append(
                "unacknowledged: \(unacknowledged.count) item(s) were in a request whose answer never arrived; the "
                    + "endpoint may have logged them twice")
        }
        return lines.joined(separator: "\n")
    }

    /// Why the flush stopped, then the endpoint's errors one a line, for stderr; nil when it did not stop.
    package var stopMessage: String? {
        guard let stopped else { return nil }
        return
            (["stopped: \(stopped.escapingControlCharacters)"]
            + errors.map { "  error: \($0.escapingControlCharacters)" })
            .joined(separator: "\n")
    }
}
