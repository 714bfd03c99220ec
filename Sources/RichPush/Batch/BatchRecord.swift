/// One payload's line in `results.ndjson`.
public struct BatchRecord: Sendable, Codable, Equatable {
    public struct Timings: Sendable, Codable, Equatable {
        public var dns: Double
        public var connect: Double
        public var tls: Double
        public var firstByte: Double
        public var total: Double
    }

    /// The input's name (relative path, or `file.ndjson:LINE`).
    public var input: String
    /// SHA-256 (lower-case hex) of the input's bytes: a resume skips the input only while they match.
    /// Absent in records of older versions and of inputs that could not be read (both are redone).
    public var inputSha256: String?
    /// The output's path relative to the output folder.
    public var output: String
    public var verdict: Verdict
    public var reason: ReasonCode
    public var message: String
    public var hint: String?
    public var unError: Int?
    public var warnings: [String]
    public var url: String?
    public var httpStatus: Int?
    public var bytes: Int64?
    public var sniffedMime: String?
    /// The stored attachment (absolute path), when attached.
    public var file: String?
    public var sha256: String?
    /// Download milestones in milliseconds.
    public var timingsMilliseconds: Timings?
    public var elapsedMilliseconds: Double

    public init(item: BatchItem, output: String, outcome: Outcome, inputSha256: String? = nil) {
        input = item.name
        self.inputSha256 = inputSha256
        self.output = output
        verdict = outcome.verdict
        reason = outcome.reason
        message = outcome.message
        hint = outcome.hint
        unError = outcome.unError
        warnings = outcome.warnings.map(\.code)
        url = outcome.url
        httpStatus = outcome.download?.status
        bytes = outcome.download?.bytes
        sniffedMime = outcome.sniff?.mime
        file = outcome.attachment?.file
        sha256 = outcome.attachment?.sha256
        timingsMilliseconds = outcome.download.map {
            Timings(
                dns: $0.dnsMilliseconds, connect: $0.connectMilliseconds, tls: $0.tlsMilliseconds,
                firstByte: $0.firstByteMilliseconds, total: $0.totalMilliseconds)
        }
        elapsedMilliseconds = outcome.elapsedMilliseconds
    }
}

extension BatchRecord {
    /// The record as one line of JSON (snake_case keys, sorted, as `BatchJSON` would write it), built
    /// directly: Foundation's JSONEncoder costs more than the rest of a payload's bookkeeping.
    public var jsonLine: String {
        func string(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        func number<T: BinaryInteger>(_ value: T?) -> JSONValue { value.map { .number(String($0)) } ?? .null }
        func double(_ value: Double) -> JSONValue { .number(value.isFinite ? String(value) : "0") }
        var members: [(key: String, value: JSONValue)] = [
            ("bytes", number(bytes)),
            ("elapsed_milliseconds", double(elapsedMilliseconds)),
            ("file", string(file)),
            ("hint", string(hint)),
            ("http_status", number(httpStatus)),
            ("input", .string(input)),
            ("input_sha256", string(inputSha256)),
            ("message", .string(message)),
            ("output", .string(output)),
            ("reason", .string(reason.rawValue)),
            ("sha256", string(sha256)),
            ("sniffed_mime", string(sniffedMime)),
        ]
        if let t = timingsMilliseconds {
            members.append(
                (
                    "timings_milliseconds",
                    .object([
                        ("connect", double(t.connect)), ("dns", double(t.dns)), ("first_byte", double(t.firstByte)),
                        ("tls", double(t.tls)), ("total", double(t.total)),
                    ])
                ))
        } else {
            members.append(("timings_milliseconds", .null))
        }
        members += [
            ("un_error", number(unError)),
            ("url", string(url)),
            ("verdict", .string(verdict.rawValue)),
            ("warnings", .array(warnings.map { .string($0) })),
        ]
        // Absent optionals are left out, as JSONEncoder does.
        return JSONValue.object(members.filter { $0.value != .null }).text + "\n"
    }
}

/// What `summary.json` holds, and the stderr table shows.
public struct BatchSummary: Sendable, Codable, Equatable {
    /// Payloads found in the input.
    public var total: Int
    /// Payloads with a record (done in this run or an earlier one).
    public var recorded: Int
    /// Payloads processed by this run.
    public var processed: Int
    /// Payloads skipped because an earlier run completed them.
    public var skipped: Int
    /// Whether the run was interrupted (rerun the same command to resume).
    public var interrupted: Bool
    public var verdicts: [String: Int]
    public var reasons: [String: Int]
    /// Payloads that asked for an attachment (or could not be read as a payload): all but `no-attachment`.
    public var requested: Int
    /// Payloads whose attachment would show.
    public var attached: Int
    /// `attached / requested` (1 when nothing was requested).
    public var displayRate: Double
    /// Download time percentiles in milliseconds (p50, p90, p99, max), over payloads that downloaded.
    public var downloadMilliseconds: [String: Double]
    public var elapsedSeconds: Double
}
