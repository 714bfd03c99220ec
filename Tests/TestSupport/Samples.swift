import Foundation
import RichPush
import RichPushServices

/// The sample payloads and what each is expected to get, from Samples/expected.tsv.
package enum SamplePayloads {
    package static let folder = Fixtures.root + "/Samples/payloads"

    /// (payload file name, verdict, reason) for every line of Samples/expected.tsv, sorted by name,
    /// read with the parser `richpush demo` uses.
    package static let expectations: [(name: String, verdict: String, reason: String)] = {
        let text = (try? String(contentsOfFile: Fixtures.root + "/Samples/expected.tsv", encoding: .utf8)) ?? ""
        let parsed = (try? SampleExpectations(text: text))?.byPayload ?? [:]
        return parsed.keys.sorted().compactMap { name in
            parsed[name].map { (name, $0.verdict.rawValue, $0.reason.rawValue) }
        }
    }()

    package static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
    }

    /// A `--budget`, in seconds, for running every sample at once: room on a loaded machine for the
    /// samples that attach (10 s, scaled by ``TimeScale``), yet under the 40 s the server holds its
    /// answer for the samples expected to expire (their URLs ask for `delay=40000`), so those still do.
    package static let budgetSeconds = min(TimeScale.scaled(10), 30)

    /// How long the server holds its answer for sample `name`: the `delay=` (milliseconds) of its URL;
    /// nil when it asks for none.
    package static func serverDelay(_ name: String) throws -> Duration? {
        let text = String(decoding: try bytes(name), as: UTF8.self)
        guard let digits = text.components(separatedBy: "delay=").dropFirst().first?.prefix(while: { $0.isNumber }),
            let milliseconds = Int(digits)
        else { return nil }
        return .milliseconds(milliseconds)
    }
}
