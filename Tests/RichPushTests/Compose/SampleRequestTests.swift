import Foundation
import RichPush
import RichPushServices
import TestSupport
import Testing

/// `Samples/requests/`: every request has its expected result, one of each refusal is there, and
/// the envelope lines match their schema.
@Suite struct SampleRequestTests {
    static let folder = Fixtures.root + "/Samples/requests"

    func expectations() throws -> RequestSampleExpectations {
        try RequestSampleExpectations(text: String(contentsOfFile: Self.folder + "/expected.tsv", encoding: .utf8))
    }

    func compose(_ name: String, _ dialect: ComposeDialect) throws -> Result<ComposedPush, ComposeRefusal> {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.folder + "/" + name)))
        return Composer.compose(bytes, options: ComposeOptions(dialect: dialect))
    }

    @Test func everySampleRequestComposesAsExpected() throws {
        let rows = try expectations().rows
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder).filter { $0.hasSuffix(".json") }
        #expect(Set(rows.map(\.request)) == Set(files))
        for (name, expectation) in rows {
            let result = try compose(name, expectation.dialect)
            let payload = FileManager.default.contents(atPath: Self.folder + "/expected/" + name).map { [UInt8]($0) }
            #expect(expectation.matches(result, payload: payload), "\(name): \(result)")
        }
    }

    @Test func oneOfEachBrazeRefusalIsASample() throws {
        let refused = Set(try expectations().rows.map(\.expectation.result))
        for code in [
            "invalid-extra-payload", "reserved-extra-key", "missing-asset-file-type", "unsupported-asset-file-type",
            "apple-push-length-exceeded", "button-rule", "too-many-recipients", "no-recipients",
            "broadcast-with-recipients", "no-message-to-send", "message-variant-unspecified",
        ] {
            #expect(refused.contains(code), "no sample request is refused with \(code)")
        }
    }

    /// Every sample request that composes is read back by `--sdk auto` as the SDK it was composed for.
    @Test func everyComposedSampleIsDetectedAsItsSDK() throws {
        var composed = 0
        for (name, expectation) in try expectations().rows {
            guard case .success(let push) = try compose(name, expectation.dialect) else { continue }
            #expect(DialectDetection.detect(push.payload).name == expectation.dialect.rawValue, "\(name)")
            composed += 1
        }
        #expect(composed == 7)
    }

    /// A wrong expectation is caught: the check is not a tautology.
    @Test func aDifferentPayloadOrStatusDoesNotMatch() throws {
        let row = RequestSampleExpectations.Expectation(dialect: .braze, result: "payload", detail: "alert")
        let push = try compose("rich-image.json", .braze)
        #expect(!row.matches(push, payload: Array("{}".utf8)))
        let refusal = RequestSampleExpectations.Expectation(dialect: .braze, result: "no-recipients", detail: "401")
        #expect(!refusal.matches(try compose("refused-no-recipients.json", .braze), payload: nil))
    }

    @Test func envelopesMatchTheirSchema() throws {
        let schema = Fixtures.root + "/Samples/schemas/compose-envelope.schema.json"
        let users = try Composer.users([UInt8](Data(contentsOf: URL(fileURLWithPath: Self.folder + "/users.ndjson"))))
            .get()
        var lines: [JSONValue] = []
        for (name, expectation) in try expectations().rows {
            switch try compose(name, expectation.dialect) {
            case .success(let push): lines.append(push.envelope())
            case .failure(let refusal): lines.append(ComposedPush.envelope(refusal: refusal))
            }
        }
        let liquid = try Composer.read(
            [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.folder + "/liquid-welcome.json")))
        ).get()
        for (index, user) in users.enumerated() {
            lines.append(try Composer.compose(liquid, user: user).get().envelope(user: index + 1))
        }
        for line in lines {
            let problems = try JSONSchemaCheck.violations(of: try JSONSchemaCheck.parse(line.text), schemaFile: schema)
            #expect(problems.isEmpty, "\(line.text): \(problems)")
        }
        // The schema is not vacuous: an unknown member is a violation.
        let wrong = try JSONSchemaCheck.parse(#"{"headers":{"apns-push-type":"alert"},"payload":{},"extra":1}"#)
        #expect(!(try JSONSchemaCheck.violations(of: wrong, schemaFile: schema)).isEmpty)
    }

    /// The demo's check passes on the samples and names a request whose expectation is wrong.
    @Test func theDemoCheckNamesARequestThatDoesNotComposeAsExpected() throws {
        #expect(DemoRequests.check(folder: Fixtures.root + "/Samples").mismatches == [])
        let samples = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: samples) }
        try FileManager.default.copyItem(atPath: Self.folder, toPath: samples + "/requests")
        let expected = samples + "/requests/expected.tsv"
        let text = try String(contentsOfFile: expected, encoding: .utf8)
        try text.replacingOccurrences(of: "reserved-extra-key\t400", with: "reserved-extra-key\t429")
            .write(toFile: expected, atomically: true, encoding: .utf8)
        let check = DemoRequests.check(folder: samples)
        #expect(check.checked == 18)
        #expect(check.mismatches.count == 1)
        #expect(check.mismatches.first?.hasPrefix("refused-extra-ab.json: expected reserved-extra-key (429)") == true)
        #expect(check.text.hasPrefix("Requests: 1 of 18 do not compose"))
    }
}
