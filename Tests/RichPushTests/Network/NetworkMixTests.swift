import RichPush
import Testing

/// Campaign mixes: parsing, exact proportions and a seeded, stable assignment.
@Suite struct NetworkMixTests {
    @Test func assignsDevicesInExactlyTheRequestedProportions() throws {
        let mix = try NetworkMix(parsing: "3g=20,lte=70,wifi=10")
        let profiles = mix.assignments(devices: 1000, seed: 42)
        #expect(profiles.count == 1000)
        #expect(profiles.filter { $0.name == "3g" }.count == 200)
        #expect(profiles.filter { $0.name == "lte" }.count == 700)
        #expect(profiles.filter { $0.name == "wifi" }.count == 100)
    }

    @Test func givesTheLeftoverDevicesToTheLargestRemainders() throws {
        let mix = try NetworkMix(parsing: "3g=33,lte=33,wifi=34")
        // 10 devices: exact shares 3.3, 3.3, 3.4 -> floors 3, 3, 3 and the one left to wifi.
        #expect(mix.counts(devices: 10) == [3, 3, 4])
        // 7 devices: 2.31, 2.31, 2.38 -> 2, 2, 2 and the one left to wifi.
        #expect(mix.counts(devices: 7) == [2, 2, 3])
        // Ties go to the entry given first.
        #expect(try NetworkMix(parsing: "edge=50,3g=50").counts(devices: 3) == [2, 1])
        for devices in [0, 1, 2, 99, 101, 12_345] {
            #expect(mix.counts(devices: devices).reduce(0, +) == devices)
        }
    }

    @Test func theSeedFixesTheOrderAndADifferentSeedChangesIt() throws {
        let mix = try NetworkMix(parsing: "3g=50,lte=50")
        let first = mix.assignments(devices: 200, seed: 7).map(\.name)
        #expect(first == mix.assignments(devices: 200, seed: 7).map(\.name))
        #expect(first != mix.assignments(devices: 200, seed: 8).map(\.name))
        // Shuffled, not blocks: the first half is not all one profile.
        #expect(Set(first.prefix(100)).count == 2)
    }

    @Test(arguments: [
        ("3g=20,lte=70", "sum to 90, not 100"),
        ("3g=20,lte=90", "sum to 110, not 100"),
        ("5g=100", "'5g' is not a built-in profile"),
        ("3g=50,3G=50", "given twice"),
        ("3g=fifty,lte=50", "not a whole percentage"),
        ("3g=0,lte=100", "not a whole percentage"),
        ("3g", "is not NAME=PERCENT"),
        ("", "is not NAME=PERCENT"),
    ])
    func rejectsMalformedMixes(text: String, reason: String) {
        do {
            let mix = try NetworkMix(parsing: text)
            Issue.record("'\(text)' parsed as \(mix)")
        } catch {
            #expect(error.code == .invalidMix)
            #expect(error.message.contains(reason), "\(error.message)")
            #expect(error.message.contains("NAME=PERCENT"))
        }
    }

    @Test func acceptsPercentSignsAndSpaces() throws {
        let mix = try NetworkMix(parsing: "3g=25%, lte=75%")
        #expect(mix.entries.map(\.percent) == [25, 75])
    }
}
