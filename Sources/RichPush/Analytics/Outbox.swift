import Foundation

/// The items a flush claimed from a suite and has not delivered yet, kept in a JSON file beside the
/// suite (`.<suite>.richpush-outbox.json`) so a flush that was killed resumes where it stopped.
///
/// An item leaves ``items`` only when a request carrying it got a 2xx answer (into ``rejected`` when
/// that answer named it invalid). Before a request is sent its items are marked ``Item/sending`` and
/// the file is replaced, so a resumed flush knows which items were in a request whose answer never
/// arrived: the only ones the endpoint may see twice. Every write replaces the file atomically.
public struct Outbox: Codable, Sendable, Equatable {
    /// One claimed item, as it will be sent.
    public struct Item: Codable, Sendable, Equatable {
        /// Unique within the outbox: the claim id and the item's position in that claim.
        public var id: String
        /// The claim that moved it out of the suite.
        public var claim: String
        public var kind: SuiteEntry.Kind
        /// The event's name (events only).
        public var name: String?
        /// When the event was claimed, ISO 8601 (events only): the time the app would log it with.
        public var time: String?
        /// Event properties or the attributes it sets.
        public var fields: [SuiteEntry.Field]
        /// Part of a request that was sent (or about to be) and not answered yet.
        public var sending = false
        /// How many requests carried it.
        public var sends = 0

        public init(
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
    public struct Rejected: Codable, Sendable, Equatable {
        public var item: Item
        /// The endpoint's reason.
        public var reason: String
    }

    public var version = 1
    public var items: [Item] = []
    /// A claim whose removal from the suite is not confirmed yet: the suite's marker key says
    /// whether the replace that removed its items happened.
    public var unconfirmedClaim: String?
    public var rejected: [Rejected] = []
    /// Items that were in a request whose answer never arrived, not yet reported by a flush that
    /// finished: kept here so a flush killed before its summary does not lose the warning.
    public var unreported: [Item] = []

    public init() {}

    /// Adds `item` to ``unreported`` unless it is there already.
    mutating func noteUnacknowledged(_ item: Item) {
        if !unreported.contains(where: { $0.id == item.id }) { unreported.append(item) }
    }

    /// Reads the outbox at `path`; `nil` when there is none.
    public static func load(from path: String) throws(AnalyticsError) -> Outbox? {
        let descriptor: Int32
        do {
            descriptor = try SystemCall.openRegularFile(path)
        } catch {
            if error.code == ENOENT { return nil }
            throw AnalyticsError(.storage, error.message)
        }
        defer { close(descriptor) }
        let bytes: [UInt8]
        do {
            bytes = try SystemCall.readAll(descriptor, upTo: 256 << 20, path: path)
        } catch {
            throw AnalyticsError(.storage, error.message)
        }
        do {
            let outbox = try JSONDecoder().decode(Outbox.self, from: Data(bytes))
            guard outbox.version == 1 else { throw AnalyticsError(.outboxUnreadable, "version \(outbox.version)") }
            return outbox
        } catch {
            throw AnalyticsError(
                .outboxUnreadable,
                "'\(path)' is not an outbox this richpush wrote; move it aside to inspect it (its items were "
                    + "claimed from the suite and are not in it any more)")
        }
    }

    /// Replaces the file at `path` atomically and durably; removes it when nothing is left in it.
    public func save(to path: String) throws(AnalyticsError) {
        if items.isEmpty && rejected.isEmpty && unreported.isEmpty && unconfirmedClaim == nil {
            if unlink(path) != 0 && errno != ENOENT {
                throw AnalyticsError(.storage, SystemError.current("remove", path: path).message)
            }
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(self)
        } catch {
            throw AnalyticsError(.storage, "cannot encode the outbox: \(error)")
        }
        do {
            try OutputFile.write([UInt8](data), to: path, durable: true)
        } catch {
            throw AnalyticsError(.storage, error.message)
        }
    }
}
