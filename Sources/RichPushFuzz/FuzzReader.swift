import Glibc

/// The readers under test; an input's first byte, modulo one more than the largest raw value, picks one.
enum FuzzReader: UInt8, CaseIterable {
    /// A payload: JSON parse, inspection, round trip, and the mutated payload's writer.
    case payload = 0
    /// An NDJSON batch input: the line splitter, each line's read, and each line as a payload.
    case ndjson = 1
    /// Batch records: `results.ndjson` and journal lines, decoded, re-encoded and read back.
    case records = 2
    /// A property list: the bounded reader's limits and defects, and a round trip of what it accepts.
    case plist = 3
    /// An App Group suite: read, record an event, read again.
    case suite = 4
    /// Rate-limit header values (`Retry-After`, `X-RateLimit-Reset`, HTTP-dates) and the key redaction.
    case headers = 5
    /// A `/users/track` answer's body, and the same bytes as an outbox log.
    case trackResponse = 6
    /// `report merge` inputs: a bench report or a batch summary, read, written back and merged with itself.
    case report = 7
    /// A body's start for the media scanner (ID3v2 tag end, MPEG-4 brands and video handler), whole and
    /// in chunks.
    case mediaScan = 8
    /// A gate threshold's text (`display>=99%`, `p95<800ms`): the grammar, for bench and batch metrics.
    case threshold = 9
    /// A bench's URL list (`--urls`: URLs, templates, weights) and cache headers (Cache-Status, X-Cache, ...).
    case campaign = 12

    /// Checks `input` (selector byte first) against its reader; a broken invariant aborts with a message.
    ///
    /// The selector is taken modulo one more than the largest raw value (the case count once every
    /// value is used), so each reader keeps its seeds' first byte whichever readers a branch has.
    static func check(_ input: [UInt8]) {
        let readers = (FuzzReader.allCases.map(\.rawValue).max() ?? 0) + 1
        guard let selector = input.first, let reader = FuzzReader(rawValue: selector % readers) else { return }
        let bytes = Array(input.dropFirst())
        switch reader {
        case .payload: PayloadInvariants.check(bytes)
        case .ndjson: NDJSONInvariants.check(bytes)
        case .records: RecordInvariants.check(bytes)
        case .plist: PlistInvariants.check(bytes)
        case .suite: SuiteInvariants.check(bytes)
        case .headers: HeaderInvariants.check(bytes)
        case .trackResponse: TrackResponseInvariants.check(bytes)
        case .report: ReportInvariants.check(bytes)
        case .mediaScan: MediaScanInvariants.check(bytes)
        case .threshold: ThresholdInvariants.check(bytes)
        case .campaign: CampaignInvariants.check(bytes)
        }
    }
}

/// Ends the run with `message` when `condition` is false; libFuzzer then saves the input as a crash.
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    guard !condition else { return }
    report("richpush-fuzz: invariant broken: \(message())\n")
    abort()
}

/// Splits `bytes` at each newline; the last piece is what follows the last newline (maybe empty).
func splitLines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
    bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
}

/// Writes `text` to stderr; a failing write is ignored (there is nowhere else to say it).
func report(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
