import Foundation

/// What the server remembers about one request between libmicrohttpd's calls: created when the
/// request line arrives (with the raw target, before percent-decoding), released when the request ends.
///
/// Only the connection's event-loop thread touches it, one call at a time, and libmicrohttpd
/// orders those calls; hence `@unchecked Sendable`.
final class RequestRecord: @unchecked Sendable {
    /// The request target exactly as sent.
    let rawTarget: String
    let started = ContinuousClock.now
    var method = ""
    /// The server's request number (1-based), set on the first handler call.
    var sequence = 0
    /// The faults for this request, read on the first handler call.
    var plan: FaultPlan?
    /// When a `delay=` fault ends; nil when none was asked or it has been served.
    var delayUntil: ContinuousClock.Instant?
    /// The emulated edge's headers for this answer (`Cache-Status`, `Age`), in edge mode.
    var edgeHeaders: [(String, String)] = []
    /// The status queued, if any.
    var status: Int?
    /// Body bytes of a response built in memory (streamed bodies count in ``body``).
    var bufferedBytes: UInt64 = 0
    /// The streamed body, to read how many bytes it produced.
    var body: ResponseBody?
    /// Set for a `POST /users/track` request (see ``handleUsersTrack``).
    var usersTrack: UsersTrackRequest?
    /// Set for an SDK's own call (see ``handleSDKEndpoint``).
    var sdkEndpoint = false

    init(rawTarget: String) { self.rawTarget = rawTarget }

    /// The raw path (before `?`) percent-decoded to bytes, exactly as the server must interpret it.
    var decodedPath: [UInt8] {
        let raw = Array(rawTarget.utf8.prefix { $0 != UInt8(ascii: "?") })
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var index = 0
        while index < raw.count {
            if raw[index] == UInt8(ascii: "%"), index + 2 < raw.count,
                let high = hexValue(raw[index + 1]), let low = hexValue(raw[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(raw[index])
                index += 1
            }
        }
        return bytes
    }

    /// The entry `--access-log` prints for this request.
    func logEntry() -> AccessLogEntry {
        let elapsed = ContinuousClock.now - started
        let (seconds, attoseconds) = elapsed.components
        var target = ""
        for scalar in rawTarget.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7f {
                target += "%" + String(format: "%02X", scalar.value)
            } else {
                target.unicodeScalars.append(scalar)
            }
        }
        var entry = AccessLogEntry(
            method: method.isEmpty ? "-" : method, target: target, status: status,
            bytes: body?.bytesProduced ?? bufferedBytes,
            milliseconds: Double(seconds) * 1000 + Double(attoseconds) / 1e15)
        entry.ignoredParameters = (plan?.ignoredParameters ?? []).map { name in
            String(name.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
        }
        return entry
    }

    private func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
