import Foundation
import POSIXKit
import RichPush
import RichPushRuns
import TestSupport
import Testing

/// A bench's configuration: the choices that exclude each other, the payload made for `--url`,
/// the embedded server's target, and the checks made before a run.
@Suite struct BenchConfigurationTests {
    /// Messages spell settings as the command line does, as users read them.
    init() { useCommandLineSpelling() }

    func configuration(
        payload: String? = nil, url: String? = "https://127.0.0.1/hero.jpg", type: String? = nil,
        arrival: String? = nil, ramp: Double? = nil, rate: Double? = nil, serving: Bool = false
    ) throws(ConfigurationError) -> BenchConfiguration {
        useCommandLineSpelling()
        return try BenchConfiguration(
            devices: 10, payload: payload, url: url, type: type, arrival: arrival, ramp: ramp, rate: rate,
            serving: serving)
    }

    @Test func oneArrivalModelAtMost() throws {
        #expect(try configuration().arrival == .burst)
        #expect(try configuration(arrival: "burst").arrival == .burst)
        #expect(try configuration(ramp: 5).arrival == .ramp(seconds: 5))
        #expect(try configuration(rate: 200).arrival == .rate(perSecond: 200))
        // `--arrival burst` is the default's name, so it does not count as a second model.
        #expect(try configuration(arrival: "burst", ramp: 5).arrival == .ramp(seconds: 5))
        let mistakes: [(String?, Double?, Double?)] = [
            (nil, 5, 200), ("poisson", nil, nil), (nil, 1, 1), ("ramp", 5, nil), ("poisson", 5, nil),
        ]
        for (arrival, ramp, rate) in mistakes {
            let error = setupError { _ = try configuration(arrival: arrival, ramp: ramp, rate: rate) }
            #expect(error?.code == .invalidCombination)
            #expect(error?.message.hasPrefix("choose one arrival model: --arrival burst") == true)
        }
    }

    @Test func theArrivalModelNamesTheReportsRows() throws {
        let config = try configuration(ramp: 2.5).reportConfig
        #expect(config.arrival == "ramp")
        #expect(config.rampSeconds == 2.5)
        #expect(config.ratePerSecond == nil)
        let rate = try configuration(rate: 40).reportConfig
        #expect(rate.arrival == "rate")
        #expect(rate.ratePerSecond == 40)
        #expect(rate.rampSeconds == nil)
    }

    @Test func aURLWithoutASchemeIsAUsageErrorWithTheCorrection() {
        let error = setupError { _ = try configuration(url: "cdn.example.com/hero.jpg") }
        #expect(error?.code == .invalidValue)
        #expect(
            error?.text == "--url cdn.example.com/hero.jpg has no scheme: did you mean --url "
                + "https://cdn.example.com/hero.jpg ?")
        // With the embedded server, a bare path is a path on it.
        #expect(setupError { _ = try configuration(url: "hero.jpg?delay=200", serving: true) } == nil)
    }

    @Test func payloadAndURLExcludeEachOtherAndOneIsNeeded() {
        let both = setupError { _ = try configuration(payload: "p.json", url: "https://127.0.0.1/a.jpg") }
        #expect(both == ConfigurationError(.invalidCombination, "give one of --payload, --url or --urls"))
        let neither = setupError { _ = try configuration(url: nil) }
        #expect(
            neither
                == ConfigurationError(
                    .invalidCombination, "a bench needs a target: --payload FILE, --url URL or --urls FILE"))
        #expect(setupError { _ = try configuration(url: nil, serving: true) } == nil)
    }

    @Test func thePayloadMadeForAURLCarriesItsURLAndType() throws {
        let made = try configuration(url: "https://127.0.0.1:8443/images/hero.jpg?v=2").payload()
        let root = try JSONValue.parse(made.bytes)
        #expect(root["ab"]?["att"]?["url"] == .string("https://127.0.0.1:8443/images/hero.jpg?v=2"))
        #expect(root["ab"]?["att"]?["type"] == .string("jpg"))
        #expect(root["aps"]?["mutable-content"] == .number("1"))
        #expect(
            made.target
                == BenchReport.Target(url: "https://127.0.0.1:8443/images/hero.jpg?v=2", type: "jpg", payload: nil))
        // The payload is one the extension would download.
        guard case .media(let items, _, _) = PayloadInspector.inspect(made.bytes), let item = items.first else {
            Issue.record("the payload made for --url requests no attachment")
            return
        }
        let (url, type) = (item.url, item.declared)
        #expect(url == "https://127.0.0.1:8443/images/hero.jpg?v=2")
        #expect(type == "jpg")
        // --type wins over the extension; an unknown type is refused with what to give.
        let typed = try configuration(url: "https://127.0.0.1/asset", type: "png").payload()
        #expect(try JSONValue.parse(typed.bytes)["ab"]?["att"]?["type"] == .string("png"))
        let unknown = setupError { _ = try configuration(url: "https://127.0.0.1/asset").payload() }
        #expect(unknown?.message.hasPrefix("cannot tell the attachment type of https://127.0.0.1/asset") == true)
    }

    @Test func aPayloadFileMustRequestAnAttachment() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let good = folder + "/good.json"
        let text =
            #"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"https://127.0.0.1/a.gif","type":"gif"}}}"#
        try Data(text.utf8).write(to: URL(fileURLWithPath: good))
        let made = try configuration(payload: good, url: nil).payload()
        #expect(made.bytes == Array(text.utf8))
        #expect(made.target == BenchReport.Target(url: "https://127.0.0.1/a.gif", type: "gif", payload: good))
        let plain = folder + "/plain.json"
        try Data(#"{"aps":{"alert":"Hi"}}"#.utf8).write(to: URL(fileURLWithPath: plain))
        let error = setupError { _ = try configuration(payload: plain, url: nil).payload() }
        #expect(error?.message.contains("does not request an attachment") == true)
        let missing = setupError { _ = try configuration(payload: folder + "/none.json", url: nil).payload() }
        #expect(missing == ConfigurationError(.unusableInput, "cannot read \(folder)/none.json", setting: .payload))
        #expect(missing?.text == "--payload cannot read \(folder)/none.json")
    }

    @Test func theEmbeddedServerMapsTheSampleHostAndTrustsItsCA() throws {
        var served = try configuration(url: "/hero.jpg?delay=200", serving: true)
        served.serve(httpsPort: 40123, caFile: "/ca.pem")
        #expect(served.url == "https://cdn.example.com/hero.jpg?delay=200")
        #expect(served.policy.fetch.caFile == "/ca.pem")
        #expect(served.policy.fetch.hostMappings.map(\.description) == ["cdn.example.com:443:127.0.0.1:40123"])
        var byDefault = try configuration(url: nil, serving: true)
        byDefault.policy.fetch.caFile = "/mine.pem"
        byDefault.serve(httpsPort: 1, caFile: "/ca.pem")
        #expect(byDefault.url == "https://cdn.example.com/hero.jpg")
        #expect(byDefault.policy.fetch.caFile == "/mine.pem")
        // The mapping makes the served host this machine.
        try byDefault.checkHost(try byDefault.payload().target)
    }

    @Test func anotherMachineNeedsTheOwnersWord() throws {
        var remote = try configuration(url: "https://cdn.example.com/hero.jpg")
        let target = try remote.payload().target
        let error = setupError { try remote.checkHost(target) }
        #expect(error?.code == .invalidCombination)
        #expect(error?.message.hasPrefix("https://cdn.example.com/hero.jpg is not on this machine.") == true)
        remote.ownsHost = true
        try remote.checkHost(target)
    }

    @Test func tooFewOpenFilesNamesTheLimitAndALowerConcurrency() throws {
        useCommandLineSpelling()
        var config = try configuration()
        config.devices = 5000
        config.concurrency = 1000
        let roomy = DescriptorBudget(limit: 2000, hardLimit: 4096, open: 4)
        try config.checkDescriptors(roomy)
        let error = setupError { try config.checkDescriptors(DescriptorBudget(limit: 500, hardLimit: 4096, open: 4)) }
        #expect(error?.code == .tooFewDescriptors)
        #expect(
            error?.message.contains("--concurrency 1000 needs about 1068 open files") == true,
            "\(String(describing: error))")
        #expect(error?.message.contains("4 already open") == true)
        #expect(error?.message.hasSuffix("Raise it with 'ulimit -n 1068', or lower --concurrency to 432.") == true)
        // Kept attachments need a temporary file per device too, and the relay two more.
        config.keepFolder = "out"
        #expect(setupError { try config.checkDescriptors(roomy) }?.message.contains("needs about 2068") == true)
        config.policy.fetch.network = NetworkProfile.named("lte")
        let relayed = setupError {
            try config.checkDescriptors(DescriptorBudget(limit: 4000, hardLimit: 4000, open: 4))
        }
        // ... and the relay its own: its epoll set, wake-up event, timer and a listener.
        let relayOwn = NetworkRelay.fixedDescriptors + NetworkRelay.descriptorsPerRoute
        #expect(
            relayed?.message.contains("needs about \(4068 + relayOwn) open files (4 per download") == true,
            "\(String(describing: relayed))")
        #expect(relayed?.message.contains("\(relayOwn) for the network profile's relay itself") == true)
        // Past the hard limit the advice is the hard limit; and it never proposes a concurrency below 1.
        #expect(relayed?.message.contains("Raise the hard limit") == true)
        let none = setupError { try config.checkDescriptors(DescriptorBudget(limit: 64, hardLimit: 64, open: 10)) }
        #expect(none?.message.contains("lower --concurrency") == false, "\(String(describing: none))")
    }

    @Test func aShardIsIOfN() throws {
        #expect(try Shard(parsing: "2/4") == Shard(index: 2, count: 4))
        for text in ["0/4", "5/4", "2", "a/b", "1/0", "1/2/3"] {
            #expect(throws: ConfigurationError.invalid(.shard, "takes I/N with 1 <= I <= N, for example 2/4")) {
                _ = try Shard(parsing: text)
            }
        }
        let shard = Shard(index: 2, count: 3)
        #expect((0..<9).filter { shard.contains(position: $0) } == [1, 4, 7])
    }
}
