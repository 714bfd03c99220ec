import Foundation
import POSIXKit
import RichPush

/// Writes to stderr, where everything but payload JSON and requested data goes.
///
/// A diagnostic that cannot be written (stderr closed, full, or a closed pipe) is dropped: it must
/// never end or change a run. Text that echoes payload values must be escaped by the caller
/// (``Swift/String/escapingControlCharacters``), so a payload cannot forge a line.
func printError(_ text: String) {
    StandardError.write(text + "\n")
}

/// The stderr writer: `write(2)` on descriptor 2, errors ignored.
enum StandardError {
    /// Writes `text` without URL credentials; a failure (EPIPE, EBADF, ENOSPC, ...) is ignored.
    static func write(_ text: String) {
        // A URL's user name and password never reach the terminal or a CI log (URLCredentials).
        try? SystemCall.writeAll(2, Array(URLCredentials.stripped(text).utf8))
    }
}

/// Writes a line to stdout and flushes it, so a script reading a pipe sees it at once.
func printLine(_ text: String) {
    print(text)
    fflush(nil)
}

/// Opens /dev/null, read-only, on any of stdin, stdout and stderr that is closed.
///
/// Otherwise the next file the process opens takes that number, and a diagnostic written to "stderr"
/// would land in an attachment or a report. Read-only, so that a write to a closed stdout still fails
/// (EBADF): a payload or report asked for on stdout is not silently dropped, it is exit 74 like any
/// other output that cannot be written (`richpush process p.json >&-`). Reads see an empty stdin.
func occupyStandardDescriptors() {
    for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) < 0 && errno == EBADF {
        let opened = open("/dev/null", O_RDONLY)
        if opened >= 0 && opened != descriptor {
            dup2(opened, descriptor)
            close(opened)
        }
    }
}

/// The open-file limit below which the runtime itself (Dispatch, the fetch engine) cannot start.
let minimumDescriptors = 16

/// Raises the soft open-file limit to ``minimumDescriptors`` when it is lower and the hard limit
/// allows; false when the process cannot have that many.
func ensureDescriptorHeadroom() -> Bool {
    DescriptorBudget.ensureSoftLimit(atLeast: minimumDescriptors)
}

/// Writes `bytes` to an output opened with ``OutputOptions/prepare(_:option:)`` and puts it in place;
/// a failure is exit 74 with the option named.
func commit(_ bytes: [UInt8], to pending: PendingOutput, option: String, durable: Bool = false) throws {
    do {
        try SystemCall.writeAll(pending.descriptor, bytes, path: pending.displayPath)
        try pending.commit(durable: durable)
    } catch {
        throw CommandFailure(.ioError, "\(option): \(error.message)")
    }
}

/// JSON text with sorted keys and snake_case names, as `jq` users expect.
enum JSON {
    static func string<T: Encodable>(_ value: T, pretty: Bool = false) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if pretty { encoder.outputFormatting.insert(.prettyPrinted) }
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
