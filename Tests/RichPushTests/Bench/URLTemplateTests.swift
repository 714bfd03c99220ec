import RichPush
import RichPushRuns
import TestSupport
import Testing

/// Templates: each placeholder expands, per device, the same on every run with the same seed.
@Suite struct URLTemplateTests {
    init() { useCommandLineSpelling() }

    @Test func expandsEveryPlaceholder() throws {
        let template = try URLTemplate("https://cdn.example.com/u/{device}/hero.jpg?s={shard}&v={random}")
        #expect(template.isTemplate)
        let url = template.expand(device: 42, shard: 3, seed: 7)
        #expect(url.hasPrefix("https://cdn.example.com/u/42/hero.jpg?s=3&v="))
        let random = url.split(separator: "=").last.map(String.init) ?? ""
        #expect(random.count == 16 && random.allSatisfy(\.isHexDigit))
        #expect(template.representative == "https://cdn.example.com/u/0/hero.jpg?s=0&v=0")
    }

    @Test func randomIsPerDeviceAndPerSeedButReproducible() throws {
        let template = try URLTemplate("https://cdn.example.com/hero.jpg?v={random}")
        let first = (0..<1000).map { template.expand(device: $0, shard: 1, seed: 1) }
        #expect(Set(first).count == 1000)
        #expect(first == (0..<1000).map { template.expand(device: $0, shard: 1, seed: 1) })
        #expect(template.expand(device: 5, shard: 1, seed: 2) != first[5])
    }

    @Test func aQueryRightAfterTheHostMayHoldOne() throws {
        let template = try URLTemplate("https://cdn.example.com?x={shard}")
        #expect(template.expand(device: 0, shard: 4, seed: 1) == "https://cdn.example.com?x=4")
    }

    @Test func aPathOnTheEmbeddedServerMayStartWithOne() throws {
        let template = try URLTemplate("{device}/hero.jpg?v={random}")
        #expect(template.isTemplate && template.representative == "0/hero.jpg?v=0")
    }

    @Test func aPlainURLIsNotATemplate() throws {
        let template = try URLTemplate("https://cdn.example.com/hero.jpg?rate=100")
        #expect(!template.isTemplate)
        #expect(template.expand(device: 9, shard: 2, seed: 3) == "https://cdn.example.com/hero.jpg?rate=100")
    }

    @Test(arguments: [
        "https://cdn.example.com/{user_id}.jpg", "https://cdn.example.com/{{${user_id}}}.jpg",
        "https://cdn.example.com/{device.jpg", "https://{device}.example.com/hero.jpg",
        "{device}://cdn.example.com/a.jpg",
        "https://cdn.{shard}.example.com?x=1",
    ])
    func refusesWhatIsNotAPlaceholderAfterTheHost(_ text: String) {
        #expect(throws: ConfigurationError.self) { try URLTemplate(text) }
    }

    @Test func theMessageNamesTheBraceAndTheWayOut() {
        do {
            _ = try URLTemplate("https://cdn.example.com/{{${user_id}}}.jpg")
            Issue.record("accepted an unexpanded Liquid tag")
        } catch {
            #expect(error.text.contains("{device}, {shard}, {random}"))
            #expect(error.text.contains("%7B"))
        }
    }
}
