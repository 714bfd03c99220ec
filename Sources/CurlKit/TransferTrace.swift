import CCurlShim
import Foundation

/// One transfer as `curl -v` shows it: libcurl's own lines (address, TLS version and cipher, ALPN, the
/// server's certificate), the request headers sent, the response status and headers received, then
/// the address and timings read after the transfer.
///
/// Every line has its control characters escaped (headers come from untrusted servers), and the whole
/// is bounded: libcurl's output is kept up to ``TransferSpec/traceLimit`` bytes and at most
/// ``maxLines`` lines; ``truncated`` says when some were left out.
package struct TransferTrace: Sendable, Equatable {
    /// Where a line came from.
    package enum Kind: String, Sendable {
        /// libcurl's own text (`*` in curl -v).
        case info
        /// A request line or header sent (`>`).
        case headerOut
        /// A status line or header received (`<`).
        case headerIn
    }

    /// One line of the trace.
    package struct Line: Sendable, Equatable {
        package var kind: Kind
        /// The text, control characters escaped.
        package var text: String

        package init(_ kind: Kind, _ text: String) {
            self.kind = kind
            self.text = text
        }

        /// The line as curl -v prints it: `* text`, `> header` or `< header`.
        package var rendered: String {
            switch kind {
            case .info: "* " + text
            case .headerOut: "> " + text
            case .headerIn: "< " + text
            }
        }
    }

    /// Lines kept at most per transfer.
    package static let maxLines = 400

    package var lines: [Line] = []
    /// Some of libcurl's output was left out (over the byte or line bound).
    package var truncated = false
    /// The address and port connected to, and the local ones (empty and 0 when no connection was made).
    package var remoteAddress = ""
    package var remotePort = 0
    package var localAddress = ""
    package var localPort = 0
    /// The HTTP version used ("1.1", "2"; empty when no response came).
    package var httpVersion = ""

    package init() {}

    /// The trace as curl -v would print it, one string per line.
    package var rendered: [String] {
        lines.map(\.rendered) + (truncated ? ["* (trace truncated)"] : [])
    }

    /// This trace, then `next`'s (a redirect's next hop): the lines in order, the address and version of
    /// the last hop, bounded as one trace.
    package func followed(by next: TransferTrace) -> TransferTrace {
        var joined = next
        joined.lines = Array((lines + next.lines).prefix(Self.maxLines))
        joined.truncated = truncated || next.truncated || lines.count + next.lines.count > Self.maxLines
        return joined
    }

    /// Adds what is read after the transfer: the address connected to and the milestone times, as
    /// `curl -w` names them (milliseconds from the transfer's start, each including the ones before).
    mutating func appendSummary(of outcome: TransferOutcome) {
        if !remoteAddress.isEmpty {
            var line = "Address: \(remoteAddress) port \(remotePort)"
            if !localAddress.isEmpty { line += ", from \(localAddress) port \(localPort)" }
            if !httpVersion.isEmpty { line += ", HTTP/\(httpVersion)" }
            lines.append(Line(.info, Self.escaping(line)))
        }
        func milliseconds(_ micros: Int64) -> String { String(format: "%.2f ms", Double(micros) / 1000) }
        lines.append(
            Line(
                .info,
                "Times: dns \(milliseconds(outcome.dnsMicros)), connect \(milliseconds(outcome.connectMicros)), "
                    + "tls \(milliseconds(outcome.tlsMicros)), first byte \(milliseconds(outcome.firstByteMicros)), "
                    + "total \(milliseconds(outcome.totalMicros))"))
    }

    /// Decodes the debug callback's records.
    init(records: UnsafeBufferPointer<UInt8>, truncated: Bool) {
        self.truncated = truncated
        var offset = 0
        while offset + 5 <= records.count {
            let kind: Kind
            switch records[offset] {
            case 1: kind = .headerIn
            case 2: kind = .headerOut
            default: kind = .info
            }
            var length = 0
            for index in 0..<4 { length |= Int(records[offset + 1 + index]) << (8 * index) }
            let start = offset + 5
            let end = min(records.count, start + length)
            offset = end
            // One record may hold several lines (the request's headers arrive together).
            for piece in records[start..<end].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                var bytes = piece[...]
                if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
                if bytes.isEmpty { continue }
                guard lines.count < Self.maxLines else {
                    self.truncated = true
                    return
                }
                let text = Self.escaping(String(decoding: bytes, as: UTF8.self))
                let kept =
                    switch kind {
                    case .headerOut: Self.maskingCredentials(text)
                    case .info: Self.maskingUser(text)
                    default: text
                    }
                lines.append(Line(kind, kept))
            }
        }
    }

    /// The request headers that carry credentials: their values are never kept in a trace.
    static let credentialHeaders = ["authorization", "proxy-authorization", "cookie"]

    /// A request header line with the credentials in its value replaced by `[redacted]`, keeping the
    /// scheme (`Authorization: Basic [redacted]`), so a `-v` trace says how the request authenticated
    /// without printing a password from the URL or a key; other lines unchanged.
    static func maskingCredentials(_ line: String) -> String {
        guard let colon = line.firstIndex(of: ":") else { return line }
        let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
        guard credentialHeaders.contains(name) else { return line }
        let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
        var scheme = ""
        if name != "cookie", let space = value.firstIndex(where: { $0 == " " || $0 == "\t" }) {
            scheme = String(value[..<space]) + " "
        }
        return String(line[...colon]) + " " + scheme + "[redacted]"
    }

    /// libcurl's note of the user a URL's credentials name (`Server auth using Basic with user 'ana'`)
    /// with the name masked; other lines unchanged.
    static func maskingUser(_ line: String) -> String {
        guard let range = line.range(of: " with user '") else { return line }
        return String(line[..<range.upperBound]) + "[redacted]'"
    }

    /// The text with C0 and C1 controls, DEL and the Unicode line separators as visible escapes (the
    /// same rules as RichPush's `escapingControlCharacters`, which CurlKit cannot import).
    static func escaping(_ text: String) -> String {
        func isControl(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028
                || scalar.value == 0x2029
        }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case "\n": result += "\\n"
            case _ where isControl(scalar): result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
