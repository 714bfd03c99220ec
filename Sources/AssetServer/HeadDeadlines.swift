/// Which connections still owe the server a request head, and until when: the decisions of
/// ``HeadWatch``, as a plain value with no I/O.
///
/// A connection must finish its TLS handshake and send a whole request head (request line and
/// headers) within ``firstHead`` of being accepted, and each later head on a kept-alive connection
/// within ``nextHead`` of the previous request ending. These are deadlines, not idle timeouts: a
/// client that trickles a byte now and then does not push them back. While a request is being
/// answered (including a fault that waits on purpose) the connection owes nothing.
///
/// ```swift
/// var deadlines = HeadDeadlines(firstHead: .seconds(5), nextHead: .seconds(30))
/// deadlines.opened(id, socket: fd, at: now)
/// deadlines.expire(at: now + .seconds(6))   // [fd]: close it
/// ```
struct HeadDeadlines: Sendable {
    /// One open connection: its socket, and when its head is due (nil while a request is answered).
    struct Connection: Sendable, Equatable {
        var socket: Int32
        var due: ContinuousClock.Instant?
    }

    /// From accepting a connection to its first whole request head (the TLS handshake included).
    let firstHead: Duration
    /// From the end of a request to the next whole head on the same connection.
    let nextHead: Duration
    /// The open connections, by libmicrohttpd's connection address.
    private(set) var connections: [UInt: Connection] = [:]

    init(firstHead: Duration, nextHead: Duration) {
        self.firstHead = firstHead
        self.nextHead = nextHead
    }

    /// A connection was accepted: its first head is due ``firstHead`` from `now`.
    mutating func opened(_ id: UInt, socket: Int32, at now: ContinuousClock.Instant) {
        connections[id] = Connection(socket: socket, due: now + firstHead)
    }

    /// A whole request head arrived: nothing is due until the request ends.
    mutating func headArrived(_ id: UInt) {
        connections[id]?.due = nil
    }

    /// A request ended and the connection stays open: the next head is due ``nextHead`` from `now`.
    mutating func requestEnded(_ id: UInt, at now: ContinuousClock.Instant) {
        connections[id]?.due = now + nextHead
    }

    /// The connection is closed (its socket is about to be): forget it.
    mutating func closed(_ id: UInt) {
        connections[id] = nil
    }

    /// The sockets of connections whose head is overdue at `now`, each returned once (the connection
    /// stays listed, with nothing due, until ``closed(_:)``).
    mutating func expire(at now: ContinuousClock.Instant) -> [Int32] {
        var overdue: [Int32] = []
        for (id, connection) in connections {
            guard let due = connection.due, due <= now else { continue }
            connections[id]?.due = nil
            overdue.append(connection.socket)
        }
        return overdue
    }

    /// How many open connections owe a head now.
    var waiting: Int { connections.values.count { $0.due != nil } }
}
