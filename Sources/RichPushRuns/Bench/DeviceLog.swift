import Foundation
import POSIXKit
import RichPush
import Synchronization

/// One record per bench device, written as the devices finish, for analysis elsewhere (as k6, vegeta
/// and h2load export theirs): NDJSON, or CSV with a header line.
///
/// A record holds the device's position in the run, the URL it requested, its network, its
/// scheduled arrival, start and end (milliseconds from the run's start), each download milestone
/// (milliseconds from the transfer's start, empty or null when never reached), the HTTP status,
/// bytes, HTTP version, cache result, new connections, verdict and reason. Records are in the order
/// devices finished. The log is formatted only when asked for; the run writes into a descriptor the
/// caller owns (an exclusive temporary it commits or discards, so the file is whole or absent).
///
/// ```swift
/// let log = DeviceLog(descriptor: pending.descriptor, path: "devices.csv", format: try .init(path: "devices.csv"))
/// burst.log = log
/// try log.finish()   // then commit the temporary
/// ```
package final class DeviceLog: Sendable {
    /// How records are written.
    package enum Format: String, Sendable {
        case ndjson, csv

        /// The format a file name asks for: `.csv`, or `.ndjson`, `.jsonl`, `.json`.
        package init(path: String) throws(ConfigurationError) {
            switch (path as NSString).pathExtension.lowercased() {
            case "csv": self = .csv
            case "ndjson", "jsonl", "json": self = .ndjson
            default:
                throw ConfigurationError.invalid(
                    .log, "\(path) names neither format: end it in .csv, or .ndjson (.jsonl) for JSON lines")
            }
        }
    }

    /// The CSV columns, and the NDJSON keys, in order.
    package static let columns = [
        "device", "url", "network", "scheduled_ms", "started_ms", "ended_ms", "dns_ms", "connect_ms", "tls_ms",
        "first_byte_ms", "download_ms", "status", "bytes", "http_version", "cache", "new_connections", "verdict",
        "reason",
    ]

    package let format: Format
    private let descriptor: Int32
    private let path: String
    private let state = Mutex<State>(State())

    private struct State: Sendable {
        var buffer: [UInt8] = []
        var failure: SystemError?
        var records = 0
    }

    /// Bytes gathered before a write.
    static let flushBytes = 256 * 1024

    package init(descriptor: Int32, path: String, format: Format) {
        self.descriptor = descriptor
        self.path = path
        self.format = format
        if format == .csv {
            state.withLock { $0.buffer = Array((Self.columns.joined(separator: ",") + "\n").utf8) }
        }
    }

    /// Records written so far.
    package var records: Int { state.withLock { $0.records } }

    /// Adds one device's record.
    package func record(_ device: DeviceResult) {
        let line = Array(self.line(device).utf8)
        state.withLock { state in
            guard state.failure == nil else { return }
            state.records += 1
            state.buffer += line
            if state.buffer.count >= Self.flushBytes { flush(&state) }
        }
    }

    /// Writes what is left; throws the first write that failed.
    package func finish() throws(SystemError) {
        let failure = state.withLock { state in
            flush(&state)
            return state.failure
        }
        if let failure { throw failure }
    }

    private func flush(_ state: inout State) {
        guard state.failure == nil, !state.buffer.isEmpty else { return }
        do throws(SystemError) { try SystemCall.writeAll(descriptor, state.buffer, path: path) } catch {
            state.failure = error
        }
        state.buffer.removeAll(keepingCapacity: true)
    }

    /// The device's record, with its line ending.
    func line(_ device: DeviceResult) -> String {
        func milliseconds(_ value: Duration?) -> String? {
            guard let value, value > .zero else { return nil }
            return String(format: "%.3f", value.inMilliseconds)
        }
        let values: [(String?, quoted: Bool)] = [
            (String(device.index), false), (device.url, true), (device.network, true),
            (milliseconds(device.scheduled) ?? "0.000", false), (milliseconds(device.started) ?? "0.000", false),
            (milliseconds(device.ended) ?? "0.000", false), (milliseconds(device.dns), false),
            (milliseconds(device.connect), false), (milliseconds(device.tls), false),
            (milliseconds(device.firstByte), false), (milliseconds(device.download), false),
            (device.status > 0 ? String(device.status) : nil, false), (String(device.bytes), false),
            (device.httpVersion.isEmpty ? nil : device.httpVersion, true), (device.cache.rawValue, true),
            (String(device.connectionsMade), false), (device.verdict.rawValue, true), (device.reason.rawValue, true),
        ]
        switch format {
        case .csv:
            return values.map { value, _ in value.map(Self.csvField) ?? "" }.joined(separator: ",") + "\n"
        case .ndjson:
            let members = zip(Self.columns, values).map { key, value in
                let text = value.0.map { value.quoted ? Self.jsonString($0) : $0 } ?? "null"
                return "\"\(key)\":\(text)"
            }
            return "{" + members.joined(separator: ",") + "}\n"
        }
    }

    /// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
    static func csvField(_ value: String) -> String {
        guard value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A JSON string literal.
    static func jsonString(_ value: String) -> String {
        var text = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20: text += String(format: "\\u%04x", scalar.value)
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }
}
