import Testing

@testable import RichPush

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
