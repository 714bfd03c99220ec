import Foundation
import Testing

@testable import RichPush
@testable import RichPushRuns

/// `--ios-mix`: a campaign's phones by share, drawn per device like a network mix but apart from it.
@Suite struct AudienceMixTests {
    @Test func readsVersionsLinkedSDKsAndShares() throws {
        let audience = try AudienceMix(parsing: "18=60, 18@16=10,17.5=25\n# old phones\n15=5%")
        #expect(audience.entries.map(\.device.key) == ["18.0", "18.0@16.0", "17.5", "15.0"])
        #expect(audience.entries.map(\.percent) == [60, 10, 25, 5])
        #expect(audience.entries[1].device.urlParser == .rfc1738)
        #expect(audience.description == "18.0=60,18.0@16.0=10,17.5=25,15.0=5")
    }

    @Test(arguments: [
        "", "17=75", "17=75,16=26", "17=100,17=0", "14=100", "17=abc", "17", "17@=100", "17=50,17.0=50",
        "17@14=100",
    ])
    func refusesWhatIsNoAudience(text: String) {
        #expect(throws: ConfigurationError.self) { try AudienceMix(parsing: text) }
    }

    @Test func drawsExactSharesApartFromTheNetworkMix() throws {
        let audience = try AudienceMix(parsing: "17=75,16=25")
        let phones = audience.entryIndices(devices: 1000, seed: 7)
        #expect(phones.filter { $0 == 0 }.count == 750 && phones.filter { $0 == 1 }.count == 250)
        #expect(phones == audience.entryIndices(devices: 1000, seed: 7), "the same seed, the same draw")
        // With the same seed and shares, the network mix draws another order.
        let networks = try NetworkMix(parsing: "lte=75,wifi=25").entryIndices(devices: 1000, seed: 7)
        #expect(networks.filter { $0 == 0 }.count == 750)
        #expect(networks != phones)
    }
}

/// Batch shards' phone rows add up when their summaries merge; a negative count is damage.
@Suite struct BatchAudienceMergeTests {
    static func summary(_ rows: String) throws -> BatchSummary {
        let json = """
            {"total": 4, "recorded": 4, "processed": 4, "skipped": 0, "interrupted": false,
             "verdicts": {"attached": 3, "fallback": 1}, "reasons": {"ok": 3}, "requested": 4, "attached": 3,
             "display_rate": 0.75, "download_ms": {}, "elapsed_seconds": 1, "audience": {\(rows)}}
            """
        return try BatchJSON.decoder.decode(BatchSummary.self, from: Data(json.utf8))
    }

    static let row17 = #""17.0": {"payloads": 3, "requested": 3, "attached": 3, "download_ms": {}}"#
    static let row16 = #""16.0": {"payloads": 1, "requested": 1, "attached": 0, "download_ms": {}}"#

    @Test func phoneRowsAddUp() throws {
        var merged = try Self.summary(Self.row17 + ", " + Self.row16)
        try merged.merge(try Self.summary(Self.row17 + ", " + Self.row16))
        #expect(merged.audience?["17.0"]?.payloads == 6 && merged.audience?["16.0"]?.requested == 2)
        #expect(merged.audience?["16.0"]?.displayRate == 0)
        let damaged = try Self.summary(#""16.0": {"payloads": -1, "requested": 1, "attached": 0, "download_ms": {}}"#)
        #expect(throws: ReportDamage.self) { try damaged.check() }
    }
}
