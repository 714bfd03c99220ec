import Foundation
import RichPush

/// The sample payloads and what each is expected to get, from Samples/expected.tsv.
public enum SamplePayloads {
    public static let folder = Fixtures.root + "/Samples/payloads"

    /// (payload file name, verdict, reason) for every line of Samples/expected.tsv, sorted by name,
    /// read with the parser `richpush demo` uses.
    public static let expectations: [(name: String, verdict: String, reason: String)] = {
        let text = (try? String(contentsOfFile: Fixtures.root + "/Samples/expected.tsv", encoding: .utf8)) ?? ""
        let parsed = (try? SampleExpectations(text: text))?.byPayload ?? [:]
        return parsed.keys.sorted().compactMap { name in
            parsed[name].map { (name, $0.verdict.rawValue, $0.reason.rawValue) }
        }
    }()

    public static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
    }
}
