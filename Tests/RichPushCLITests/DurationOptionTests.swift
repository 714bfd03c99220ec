import Testing

@testable import RichPushCLI

/// Duration options take what k6 and vegeta users write (`500ms`, `30s`, `2m`, `1h`); a bare number
/// keeps the unit it always had (seconds for --budget, milliseconds for --max-p99).
@Suite struct DurationOptionTests {
    static func read(_ text: String, unit: Arguments.DurationUnit = .seconds, range: ClosedRange<Double> = 0...86_400)
        throws -> Double?
    {
        let key = Key<Double?>.duration(Option("--budget", "SECONDS", "A duration."), in: range, unit: unit)
        var arguments = try Arguments(["--budget", text], options: [key.option])
        return try arguments.read(key)
    }

    @Test(arguments: [
        ("30", 30.0), ("30s", 30), ("500ms", 0.5), ("2m", 120), ("1h", 3600), ("1.5s", 1.5), ("10S", 10),
        (" 5s ", 5),
    ])
    func secondsTakeUnits(text: String, seconds: Double) throws {
        #expect(try Self.read(text) == seconds)
    }

    @Test func aBareNumberKeepsItsUnit() throws {
        #expect(try Self.read("800", unit: .milliseconds, range: 0...86_400_000) == 800)
        #expect(try Self.read("2s", unit: .milliseconds, range: 0...86_400_000) == 2000)
    }

    @Test(arguments: ["", "s", "ms", "10x", "-5s", "1e3", "nan", "inf", "5 s s", "99999h"])
    func refusesWhatIsNoDuration(text: String) {
        do {
            _ = try Self.read(text)
            Issue.record("'\(text)' was read as a duration")
        } catch {
            #expect("\(error)".contains("takes a duration"), "\(error)")
        }
    }
}
