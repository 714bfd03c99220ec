import Foundation

/// The sample payloads and what each is expected to get, from Samples/expected.tsv.
public enum SamplePayloads {
    public static let folder = Fixtures.root + "/Samples/payloads"

    /// (payload file name, verdict, reason) for every line of Samples/expected.tsv.
    public static let expectations: [(name: String, verdict: String, reason: String)] = {
        let text = (try? String(contentsOfFile: Fixtures.root + "/Samples/expected.tsv", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            let fields = line.split(separator: "\t").map(String.init)
            return fields.count == 3 ? (fields[0], fields[1], fields[2]) : nil
        }
    }()

    public static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
    }
}
