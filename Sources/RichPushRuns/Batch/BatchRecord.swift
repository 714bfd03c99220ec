import RichPush

/// One payload's line in `results.ndjson` (and the resume journal): where it came from and went,
/// around the shared outcome shape.
///
/// The line is one JSON object: `input`, `input_sha256` and `output`, then the members of
/// `Outcome.json` (verdict, reason, ..., `download` with `timings_ms`, `elapsed_ms`). The outcome's
/// fields read through the record (`record.verdict`).
@dynamicMemberLookup
package struct BatchRecord: Sendable, Decodable, Equatable {
    /// The input's name (relative path, or `file.ndjson:LINE`).
    package var input: String
    /// SHA-256 (lower-case hex) of the input's bytes: a resume skips the input only while they match.
    /// Absent in records of inputs that could not be read (they are redone).
    package var inputSha256: String?
    /// The output's path relative to the output folder.
    package var output: String
    /// The network profile the payload's download went over (the run's one, or its mix's draw); absent on loopback.
    package var network: String?
    /// The phone the payload was judged on (`DeviceVersion.key`, its audience's draw); absent without one.
    package var phone: String?
    /// What happened to the payload.
    package var outcome: Outcome

    package init(
        item: BatchItem, output: String, outcome: Outcome, inputSha256: String? = nil, network: String? = nil,
        phone: String? = nil
    ) {
        input = item.name
        self.inputSha256 = inputSha256
        self.output = output
        self.network = network
        self.phone = phone
        self.outcome = outcome
    }

    package subscript<T>(dynamicMember keyPath: KeyPath<Outcome, T>) -> T { outcome[keyPath: keyPath] }

    enum CodingKeys: String, CodingKey {
        case input
        case inputSha256 = "input_sha256"
        case output, network, phone
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        input = try container.decode(String.self, forKey: .input)
        inputSha256 = try container.decodeIfPresent(String.self, forKey: .inputSha256)
        output = try container.decode(String.self, forKey: .output)
        network = try container.decodeIfPresent(String.self, forKey: .network)
        phone = try container.decodeIfPresent(String.self, forKey: .phone)
        outcome = try Outcome(from: decoder)
    }

    /// The record as one line of JSON: its one serializer (the outcome's members as the outcome
    /// writes them), built directly, as Foundation's JSONEncoder costs more than the rest of a
    /// payload's bookkeeping. `input` comes first, so the journal finds it at once.
    package var jsonLine: String {
        var members: [(key: String, value: JSONValue)] = [(CodingKeys.input.rawValue, .string(input))]
        if let inputSha256 { members.append((CodingKeys.inputSha256.rawValue, .string(inputSha256))) }
        members.append((CodingKeys.output.rawValue, .string(output)))
        if let network { members.append((CodingKeys.network.rawValue, .string(network))) }
        if let phone { members.append((CodingKeys.phone.rawValue, .string(phone))) }
        return JSONValue.object(members + outcome.jsonMembers).text + "\n"
    }
}
