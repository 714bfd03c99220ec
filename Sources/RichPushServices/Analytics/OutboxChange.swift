import Foundation
import RichPush

/// One line of the outbox log: a change of state of some items, or the log's header or a snapshot.
///
/// Each is a JSON object on one line whose `state` names the change:
///
/// ```
/// {"state":"log","version":2}                               the first line of every log
/// {"outbox":{...},"state":"snapshot"}                       the whole outbox (a compacted log)
/// {"claim":"k3x","items":[...],"state":"queued"}            items claimed from the suite, unconfirmed
/// {"claim":"k3x","state":"confirmed"}                       the suite no longer holds them
/// {"claim":"k3x","state":"dropped"}                         the suite still holds them: forgotten here
/// {"ids":["k3x-0",...],"state":"sending"}                   in a request about to be sent
/// {"ids":[...],"state":"unsent"}                            that request surely did not deliver them
/// {"ids":[...],"rejected":[{"id":..,"reason":..}],"state":"acknowledged"}   a 2xx: gone (or rejected)
/// {"ids":[...],"state":"unacknowledged"}                    no answer: they may be at the endpoint
/// {"ids":[...],"state":"reported"}                          a summary showed that warning
/// ```
enum OutboxChange: Sendable, Equatable {
    /// An item the endpoint refused in an answer that acknowledged its request.
    struct Refusal: Codable, Sendable, Equatable {
        var id: String
        var reason: String
    }

    case header(version: Int)
    case snapshot(Outbox)
    case queued(claim: String, items: [Outbox.Item])
    case confirmed(claim: String)
    case dropped(claim: String)
    case sending(ids: [String])
    case unsent(ids: [String])
    case acknowledged(ids: [String], rejected: [Refusal])
    case unacknowledged(ids: [String])
    case reported(ids: [String])

    /// The log format this richpush writes.
    static let version = 2

    /// The line's fields, all optional: which ones a state needs is checked by ``init(line:)``.
    private struct Line: Codable {
        var state: String
        var version: Int?
        var outbox: Outbox?
        var claim: String?
        var items: [Outbox.Item]?
        var ids: [String]?
        var rejected: [Refusal]?
    }

    /// The change one line of the log holds (without its newline), or nil when it is not one.
    init?(line: ArraySlice<UInt8>) {
        guard let line = try? JSONDecoder().decode(Line.self, from: Data(line)) else { return nil }
        switch (line.state, line.claim, line.ids) {
        case ("log", _, _):
            guard let version = line.version else { return nil }
            self = .header(version: version)
        case ("snapshot", _, _):
            guard let outbox = line.outbox else { return nil }
            self = .snapshot(outbox)
        case ("queued", let claim?, _):
            guard let items = line.items else { return nil }
            self = .queued(claim: claim, items: items)
        case ("confirmed", let claim?, _): self = .confirmed(claim: claim)
        case ("dropped", let claim?, _): self = .dropped(claim: claim)
        case ("sending", _, let ids?): self = .sending(ids: ids)
        case ("unsent", _, let ids?): self = .unsent(ids: ids)
        case ("acknowledged", _, let ids?): self = .acknowledged(ids: ids, rejected: line.rejected ?? [])
        case ("unacknowledged", _, let ids?): self = .unacknowledged(ids: ids)
        case ("reported", _, let ids?): self = .reported(ids: ids)
        default: return nil
        }
    }

    /// The change as one line of JSON, with its newline.
    var line: [UInt8] {
        get throws(AnalyticsError) {
            var line = Line(state: "")
            switch self {
            case .header(let version): (line.state, line.version) = ("log", version)
            case .snapshot(let outbox): (line.state, line.outbox) = ("snapshot", outbox)
            case .queued(let claim, let items): (line.state, line.claim, line.items) = ("queued", claim, items)
            case .confirmed(let claim): (line.state, line.claim) = ("confirmed", claim)
            case .dropped(let claim): (line.state, line.claim) = ("dropped", claim)
            case .sending(let ids): (line.state, line.ids) = ("sending", ids)
            case .unsent(let ids): (line.state, line.ids) = ("unsent", ids)
            case .acknowledged(let ids, let rejected):
                (line.state, line.ids, line.rejected) = ("acknowledged", ids, rejected.isEmpty ? nil : rejected)
            case .unacknowledged(let ids): (line.state, line.ids) = ("unacknowledged", ids)
            case .reported(let ids): (line.state, line.ids) = ("reported", ids)
            }
            let encoder = JSONEncoder()
            // Sorted keys, and no pretty printing: JSON escapes every newline inside a string.
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            do {
                return [UInt8](try encoder.encode(line)) + [0x0a]
            } catch {
                throw AnalyticsError(.storage, "cannot encode a change of the outbox: \(error)")
            }
        }
    }
}
