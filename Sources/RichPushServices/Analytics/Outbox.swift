import Foundation
import RichPush

/// The items a flush claimed from a suite and has not delivered yet, kept in a file beside the suite
/// (`.<suite>.richpush-outbox.json`) so a flush that was killed resumes where it stopped.
///
/// An item leaves ``items`` only when a request carrying it got a 2xx answer (into ``rejected`` when
/// that answer named it invalid). Before a request is sent its items are marked ``Item/sending`` and
/// that is on disk, so a resumed flush knows which items were in a request whose answer never
/// arrived: the only ones the endpoint may see twice. The file is a log of changes (``OutboxLog``):
/// each is one appended line, synced before the flush goes on, so the I/O of a request does not grow
/// with the outbox.
package struct Outbox: Codable, Sendable, Equatable {
    /// One claimed item, as it will be sent.
    package struct Item: Codable, Sendable, Equatable {
        /// Unique within the outbox: the claim id and the item's position in that claim.
        package var id: String
        /// The claim that moved it out of the suite.
        package var claim: String
        package var kind: SuiteEntry.Kind
        /// The event's name (events only).
        package var name: String?
        /// When the event was claimed, ISO 8601 (events only): the time the app would log it with.
        package var time: String?
        /// Event properties or the attributes it sets.
        package var fields: [SuiteEntry.Field]
        /// Part of a request that was sent (or about to be) and not answered yet.
        package var sending = false
        /// How many requests carried it.
        package var sends = 0

        package init(
            id: String, claim: String, kind: SuiteEntry.Kind, name: String?, time: String?, fields: [SuiteEntry.Field]
        ) {
            self.id = id
            self.claim = claim
            self.kind = kind
            self.name = name
            self.time = time
            self.fields = fields
        }
    }

    /// An item the endpoint refused as invalid (a non-fatal error), kept rather than retried forever.
    package struct Rejected: Codable, Sendable, Equatable {
        package var item: Item
        /// The endpoint's reason.
        package var reason: String
    }

    package var version = 1
    package var items: [Item] = []
    /// A claim whose removal from the suite is not confirmed yet: the suite's marker key says
    /// whether the replace that removed its items happened.
    package var unconfirmedClaim: String?
    package var rejected: [Rejected] = []
    /// Items that were in a request whose answer never arrived, not yet reported by a flush that
    /// finished: kept here so a flush killed before its summary does not lose the warning.
    package var unreported: [Item] = []

    package init() {}

    /// Adds `item` to ``unreported`` unless it is there already.
    mutating func noteUnacknowledged(_ item: Item) {
        if !unreported.contains(where: { $0.id == item.id }) { unreported.append(item) }
    }

    /// Whether nothing is left in it (its file is then removed).
    package var isEmpty: Bool { items.isEmpty && rejected.isEmpty && unreported.isEmpty && unconfirmedClaim == nil }

    /// Reads the outbox log at `path`; `nil` when there is none. A torn last line is ignored, as an
    /// append that never happened; a file of the old single-object format is refused as unusable.
    package static func load(from path: String) throws(AnalyticsError) -> Outbox? {
        try OutboxLog.read(path)?.outbox
    }

    /// The outbox `bytes` of an outbox file at `path` hold (see ``load(from:)``).
    package static func decode(_ bytes: [UInt8], path: String) throws(AnalyticsError) -> Outbox {
        try OutboxLog.parse(bytes, path: path).outbox
    }

    /// Replaces the file at `path` atomically and durably with a log holding just this state;
    /// removes it when nothing is left in it.
    package func save(to path: String) throws(AnalyticsError) {
        try OutboxLog.replace(path, with: self)
    }

    /// Applies one change of the log (the same code replays a log and keeps a live one).
    mutating func apply(_ change: OutboxChange) {
        switch change {
        case .header: break
        case .snapshot(let outbox): self = outbox
        case .queued(let claim, let new):
            items += new
            unconfirmedClaim = claim
        case .confirmed(let claim):
            if unconfirmedClaim == claim { unconfirmedClaim = nil }
        case .dropped(let claim):
            items.removeAll { $0.claim == claim }
            if unconfirmedClaim == claim { unconfirmedClaim = nil }
        case .sending(let ids):
            let set = Set(ids)
            for index in items.indices where set.contains(items[index].id) {
                items[index].sending = true
                items[index].sends += 1
            }
        case .unsent(let ids):
            let set = Set(ids)
            for index in items.indices where set.contains(items[index].id) { items[index].sending = false }
        case .acknowledged(let ids, let refused):
            let set = Set(ids)
            for reason in refused {
                if let item = items.first(where: { $0.id == reason.id }) {
                    rejected.append(Rejected(item: item, reason: reason.reason))
                }
            }
            items.removeAll { set.contains($0.id) }
        case .unacknowledged(let ids):
            for id in ids {
                if let item = items.first(where: { $0.id == id }) { noteUnacknowledged(item) }
            }
        case .reported(let ids):
            let set = Set(ids)
            unreported.removeAll { set.contains($0.id) }
        }
    }
}
