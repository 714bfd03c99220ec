import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// The whole pipeline in process, against the embedded server.
@Suite struct ServiceExtensionTests {
    let rig: LocalRig
    let service: ServiceExtension
    var server: AssetServer { rig.server }
    var engine: FetchEngine { rig.engine }
    var folder: String { rig.folder }

    /// A budget the suite's start-up load (which has held a first transfer past 10 s) cannot exhaust:
    /// the tests about expiry set their own.
    init() throws {
        rig = try LocalRig(loops: 1)
        service = ServiceExtension(
            engine: rig.engine, store: try AttachmentStore(folder: rig.folder),
            policy: Fixtures.extensionPolicy(mapping: rig.server, budget: .seconds(60)))
    }

    /// The files the run left in the output folder, once the store's reusable temporaries are gone
    /// (the commands remove them when they finish).
    func leftFiles() -> [String] {
        service.store?.removeScratch()
        return Fixtures.files(in: folder)
    }

    func cleanUp() { rig.cleanUp() }

    func payload(url: String, type: String) -> [UInt8] {
        Array(#"{"aps":{"alert":"hi","mutable-content":1},"ab":{"att":{"url":"\#(url)","type":"\#(type)"}}}"#.utf8)
    }

    @Test(arguments: SamplePayloads.expectations.map(\.name))
    func everySampleGetsItsExpectedVerdict(name: String) async throws {
        defer { cleanUp() }
        let expected = try #require(SamplePayloads.expectations.first { $0.name == name })
        // Each sample names its SDK by its keys (Samples/expected.tsv): --sdk auto.
        var policy = service.policy
        policy.dialect = .auto
        // A sample expected to expire gets 10 s, unscaled: its server holds the answer 40 s, and load
        // only makes that later. Every other sample keeps the service's budget, which the suite's
        // start-up load cannot exhaust: its verdict is not about time.
        if expected.verdict == "expired" { policy.budget = .seconds(10) }
        let result = await ServiceExtension(engine: engine, store: service.store, policy: policy).process(
            try SamplePayloads.bytes(name))
        #expect(result.outcome.verdict.rawValue == expected.verdict, "\(result.outcome.summaryLine)")
        #expect(result.outcome.reason.rawValue == expected.reason, "\(result.outcome.summaryLine)")
        let left = leftFiles()
        #expect(!left.contains { $0.hasSuffix(".part") }, "no temporary file is left")
        if result.outcome.verdict != .attached {
            #expect(left.isEmpty, "a run that attaches nothing stores nothing")
        }
    }

    @Test(arguments: [
        ("hero.jpg", "jpg", "public.jpeg"), ("banner.gif", "gif", "com.compuserve.gif"),
        ("chime.mp3", "mp3", "public.mp3"),
        ("chime.m4a", "m4a", "public.mpeg-4-audio"), ("chime-mp42.m4a", "m4a", "public.mpeg-4-audio"),
        ("chime.wav", "wav", "com.microsoft.waveform-audio"), ("chime.aiff", "aif", "public.aiff-audio"),
        ("clip.mp4", "mp4", "public.mpeg-4"), ("clip.mpg", "mpg", "public.mpeg"), ("clip.avi", "avi", "public.avi"),
    ])
    func attachesEverySupportedSample(file: String, type: String, uti: String) async throws {
        defer { cleanUp() }
        let result = await service.process(payload(url: "https://cdn.example.com/\(file)", type: type))
        let attachment = try #require(result.outcome.attachment, "\(result.outcome.summaryLine)")
        #expect(attachment.uti == uti)
        let storedPath = try #require(attachment.file)
        #expect(storedPath.hasPrefix(folder + "/") && storedPath.hasSuffix("." + type))
        let stored = try Data(contentsOf: URL(fileURLWithPath: storedPath))
        #expect(Array(stored) == (try Fixtures.bytes(ofAsset: file)))
        #expect(Int64(stored.count) == attachment.bytes)
    }

    @Test func keepsEveryByteOfTheOriginalPayload() async throws {
        defer { cleanUp() }
        let original = try SamplePayloads.bytes("image-jpg.json")
        let result = await service.process(original)
        let mutated = try #require(result.mutatedPayload)
        guard case .object(let members) = try JSONValue.parse(mutated) else {
            Issue.record("the output is not an object")
            return
        }
        #expect(members.last?.key == "richpush")
        #expect(JSONValue.object(Array(members.dropLast())) == (try JSONValue.parse(original)))
        let text = String(decoding: mutated, as: UTF8.self)
        #expect(text.contains("9007199254740993") && text.contains("1.10") && text.contains("🌞"))
        let added = try #require(try JSONValue.parse(mutated)["richpush"])
        #expect(added["verdict"] == .string("attached"))
        let attachment = try #require(added["attachment"], "one attachment object")
        #expect(attachment["uti"] == .string("public.jpeg"))
        #expect(attachment["sha256"] == .string(result.outcome.attachment?.sha256 ?? "?"))
        #expect(attachment["class"] == .string("image"))
        #expect(added["download"]?["timings_ms"]?["total"] != nil)
        #expect(OutputSchemas.violations(of: added.text, against: "outcome").isEmpty)
    }

    @Test func returnsPromptlyWhenTheBudgetRunsOut() async throws {
        defer { cleanUp() }
        var policy = service.policy
        policy.budget = .seconds(2)
        let quick = ServiceExtension(engine: engine, store: service.store, policy: policy)
        let started = ContinuousClock.now
        // The server holds the rest of the body for two minutes: the run returned before that was due.
        let stall = Duration.seconds(120)
        let result = await quick.process(
            payload(url: "https://cdn.example.com/hero.jpg?stall=100&stall-ms=\(stall.wholeMilliseconds)", type: "jpg"))
        #expect(result.outcome.verdict == .expired)
        #expect(result.outcome.reason == .deadlineExceeded)
        #expect(ContinuousClock.now - started < stall, "the budget, not the server's stall, ended the run")
    }

    @Test func anExpiryUnderANetworkProfileSaysWhatTheAssetNeedsAndWhatFits() async throws {
        defer { cleanUp() }
        var policy = service.policy
        policy.budget = .seconds(2)
        // 200 kbit/s is 25 KB/s: 400 KB needs about 16 s, far over the budget however busy the machine.
        policy.fetch.network = try NetworkProfile(parsing: "down=200kbit,rtt=20ms")
        policy.fetch.connectTimeout = .seconds(30)
        let slow = ServiceExtension(engine: engine, store: service.store, policy: policy)
        let result = await slow.process(payload(url: "https://cdn.example.com/hero.jpg?size=400000", type: "jpg"))
        #expect(result.outcome.verdict == .expired, "\(result.outcome.summaryLine)")
        #expect(result.outcome.reason == .deadlineExceeded)
        let expected = TransferEstimate(profile: try #require(policy.fetch.network), bytes: 400_000)
            .hint(budget: .seconds(2), kind: "JPEG")
        #expect(result.outcome.hint == expected)
        #expect(expected.hasPrefix("at custom this 400 KB JPEG needs about 16 s; at most "))
        #expect(expected.hasSuffix(" fits in 2.0 s"))

        // Without a Content-Length the size is unknown: the hint gives only what fits.
        let chunked = await slow.process(
            payload(url: "https://cdn.example.com/hero.jpg?size=400000&chunked=1", type: "jpg"))
        #expect(chunked.outcome.verdict == .expired, "\(chunked.outcome.summaryLine)")
        let fits = TransferEstimate.hint(profile: try #require(policy.fetch.network), budget: .seconds(2))
        #expect(chunked.outcome.hint == fits)
        #expect(fits.contains("fits in 2.0 s (the server declared no size)"))
    }

    @Test func anExpiryWithoutANetworkProfileHasNoHint() async throws {
        defer { cleanUp() }
        var policy = service.policy
        policy.budget = .seconds(1)
        let quick = ServiceExtension(engine: engine, store: service.store, policy: policy)
        let result = await quick.process(payload(url: "https://cdn.example.com/hero.jpg?stall=100", type: "jpg"))
        #expect(result.outcome.verdict == .expired)
        #expect(result.outcome.hint == nil)
    }

    @Test func stopsAnOversizedDownloadEarly() async throws {
        defer { cleanUp() }
        let result = await service.process(payload(url: "https://cdn.example.com/chime.mp3?endless=1", type: "mp3"))
        #expect(result.outcome.reason == .fileTooLarge)
        #expect(result.outcome.unError == 102)
        #expect((result.outcome.download?.bytes ?? .max) <= 5_000_000)
    }

    /// A pre-compressed object is decoded before it is sniffed and stored: it attaches, as on the phone.
    @Test func attachesAPreCompressedAsset() async throws {
        defer { cleanUp() }
        let result = await service.process(payload(url: "https://cdn.example.com/hero.jpg?gzip=1", type: "jpg"))
        #expect(result.outcome.verdict == .attached, "\(result.outcome.summaryLine)")
        #expect(result.outcome.attachment?.uti == "public.jpeg")
        let download = try #require(result.outcome.download)
        #expect(download.contentEncoding == "gzip")
        #expect(download.bytes == Int64(try Fixtures.bytes(ofAsset: "hero.jpg").count))
        #expect(download.wireBytes.map { $0 > 0 && $0 != download.bytes } == true)
    }

    /// Apple's cap applies to the decoded file: a small gzip body that inflates past 10 MB is too large.
    @Test func aDecodingBombIsTooLarge() async throws {
        defer { cleanUp() }
        let result = await service.process(
            payload(url: "https://cdn.example.com/hero.jpg?gzip=1&size=60000000", type: "jpg"))
        #expect(result.outcome.reason == .fileTooLarge, "\(result.outcome.summaryLine)")
        #expect((result.outcome.download?.bytes ?? .max) <= 10_000_000)
        #expect((result.outcome.download?.wireBytes ?? .max) < 1_000_000)
        #expect(leftFiles().isEmpty)
    }

    @Test func warnsAboutImagesOverBrazesAdvice() async throws {
        defer { cleanUp() }
        let result = await service.process(payload(url: "https://cdn.example.com/hero.jpg?size=6000000", type: "jpg"))
        #expect(result.outcome.verdict == .attached)
        #expect(result.outcome.warnings.contains { $0.code == "image-over-braze-advice" })
    }

    @Test(arguments: [
        ("error.html", ReasonCode.contentUnrecognized),
        ("hero.jpg?size=0", .contentUnrecognized), ("chime.mp3", .contentClassMismatch),
        ("hero.jpg?truncate=100", .truncated), ("hero.jpg?status=500", .httpStatus),
        ("hero.jpg?redirect=21", .tooManyRedirects), ("hero.jpg?reset=0", .connectionReset),
    ])
    func explainsEveryFailure(path: String, reason: ReasonCode) async throws {
        defer { cleanUp() }
        // None of these is about time: a budget the suite's start-up load (every suite at once on two
        // cores, 21 handshakes for the redirect chain) cannot exhaust.
        let patient = ServiceExtension(
            engine: rig.engine, store: service.store,
            policy: Fixtures.extensionPolicy(mapping: rig.server, budget: .seconds(60)))
        let result = await patient.process(payload(url: "https://cdn.example.com/\(path)", type: "jpg"))
        #expect(result.outcome.verdict == .fallback)
        #expect(result.outcome.reason == reason, "\(result.outcome.summaryLine)")
        #expect(leftFiles().isEmpty)
    }

    /// `sniff FILE` and `process` give the same answer for the same bytes sent with their own type:
    /// both go through ``AttachmentValidator`` (content rules, and the cap of the bytes' class).
    @Test(
        arguments: [
            ("hero.jpg", nil), ("hero.png", nil), ("banner.gif", nil), ("large-banner.gif", nil), ("chime.mp3", nil),
            ("chime.m4a", nil), ("chime-mp42.m4a", nil), ("chime.wav", nil), ("chime.aiff", nil), ("clip.mp4", nil),
            ("clip.avi", nil), ("clip.mpg", nil), ("hero.webp", nil), ("hero.heic", nil), ("error.html", nil),
            ("hero.jpg", 12_000_000), ("chime-mp42.m4a", 6_000_000), ("clip.mp4", 6_000_000), ("chime.mp3", 4_000_000),
        ] as [(String, Int?)])
    func sniffAndProcessAgree(asset: String, size: Int?) async throws {
        defer { cleanUp() }
        var bytes = try Fixtures.bytes(ofAsset: asset)
        if let size { bytes += [UInt8](repeating: 0, count: size - bytes.count) }
        let path = folder + "/sniffed-" + asset
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let (sniff, length) = try service.sniffer.sniffFile(at: path)
        try FileManager.default.removeItem(atPath: path)
        #expect(length == Int64(bytes.count))
        let sniffed: ReasonCode
        switch AttachmentValidator.validate(file: sniff, bytes: length, policy: service.policy) {
        case .attach: sniffed = .ok
        case .reject(let reason, _): sniffed = reason
        }
        let type = sniff.attachableFormat?.extensions[0] ?? "jpg"
        let url = "https://cdn.example.com/\(asset)" + (size.map { "?size=\($0)" } ?? "")
        let processed = await service.process(payload(url: url, type: type)).outcome
        #expect(processed.reason == sniffed, "\(asset) as \(type): \(processed.summaryLine)")
    }

    /// A download task completes on a 404 with the error page saved; Braze's extension attaches that
    /// file, and iOS refuses it: the message says so, and what the body was.
    @Test(arguments: ["hero.jpg?status=404", "hero.jpg?status=503", "hero.jpg?redirect=1&code=300"])
    func explainsWhatTheExtensionMakesOfAnErrorResponse(path: String) async throws {
        defer { cleanUp() }
        let result = await service.process(payload(url: "https://cdn.example.com/\(path)", type: "jpg"))
        let outcome = result.outcome
        #expect(outcome.verdict == .fallback)
        #expect(outcome.reason == .httpStatus, "\(outcome.summaryLine)")
        #expect(outcome.message.contains("does not fail on an HTTP status"), "\(outcome.message)")
        #expect(outcome.message.contains("Braze's extension saves the"), "\(outcome.message)")
        #expect(outcome.message.contains("the phone shows the plain notification"), "\(outcome.message)")
        #expect(outcome.message.contains(path.contains("code=") ? "empty" : "text/html"), "\(outcome.message)")
        #expect(leftFiles().isEmpty)
    }

    /// A server that answers 404 with an image (a CDN's placeholder): the phone shows that image.
    @Test func showsAnErrorResponseThatIsItselfAnImage() async throws {
        defer { cleanUp() }
        let result = await service.process(
            payload(url: "https://cdn.example.com/hero.jpg?status=404&status-body=asset", type: "jpg"))
        let outcome = result.outcome
        #expect(outcome.verdict == .attached, "\(outcome.summaryLine)")
        #expect(outcome.warnings.map(\.code) == ["error-body-attached"])
        #expect(outcome.message.contains("the phone shows the server's error image"), "\(outcome.message)")
        #expect(outcome.download?.status == 404)
        #expect(outcome.attachment?.file == nil)
        #expect(outcome.attachment?.bytes == Int64(try Fixtures.bytes(ofAsset: "hero.jpg").count))
    }

    @Test func blocksARedirectToHTTPUnderATS() async throws {
        defer { cleanUp() }
        let target = server.httpBaseURL + "/hero.jpg"
        let result = await service.process(payload(url: "https://cdn.example.com/hero.jpg?to=\(target)", type: "jpg"))
        #expect(result.outcome.reason == .atsBlocked)
    }

    @Test func processesManyPayloadsAtOnce() async throws {
        defer { cleanUp() }
        let service = self.service
        let bytes = payload(url: "https://cdn.example.com/hero.png", type: "png")
        let verdicts = await withTaskGroup(of: Verdict.self) { group in
            for _ in 0..<100 { group.addTask { await service.process(bytes).outcome.verdict } }
            return await group.reduce(into: [Verdict]()) { $0.append($1) }
        }
        #expect(verdicts.count == 100 && verdicts.allSatisfy { $0 == .attached })
        #expect(leftFiles().count == 1, "the same content is stored once")
    }

    /// The streaming verdict: what the transfer kept as the bytes went by (hash, sniffer bytes, size)
    /// is what reading the stored file back would give, whatever the body's framing or pace.
    @Test(arguments: ["", "chunked=1", "rate=400000"])
    func judgesTheBodyAsItArrivesExactlyAsTheStoredFile(fault: String) async throws {
        defer { cleanUp() }
        for (file, type) in [("hero.jpg", "jpg"), ("chime.mp3", "mp3"), ("clip.mp4", "mp4"), ("chime-mp42.m4a", "m4a")]
        {
            let result = await service.process(payload(url: "https://cdn.example.com/\(file)?\(fault)", type: type))
            let outcome = result.outcome
            let attachment = try #require(outcome.attachment, "\(file) \(fault): \(outcome.summaryLine)")
            let path = try #require(attachment.file)
            let stored = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(attachment.sha256 == (try Fixtures.sha256(ofFile: path)), "\(file) \(fault)")
            #expect(attachment.bytes == Int64(stored.count))
            #expect(outcome.sniff == (try TypeSniffer().sniff(fileAt: path)), "\(file) \(fault)")
        }
    }

    @Test func keepsNothingWithoutAStoreAndGivesTheSameVerdict() async throws {
        defer { cleanUp() }
        let keeping = await service.process(payload(url: "https://cdn.example.com/banner.gif", type: "gif"))
        let empty = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let dropping = ServiceExtension(engine: engine, store: nil, policy: service.policy)
        let result = await dropping.process(payload(url: "https://cdn.example.com/banner.gif", type: "gif"))
        #expect(result.outcome.verdict == .attached)
        #expect(result.outcome.attachment?.file == nil)
        #expect(keeping.outcome.attachment?.sha256 != nil)
        #expect(result.outcome.attachment?.sha256 == nil, "nothing is stored, so nothing is hashed")
        #expect(result.outcome.attachment?.bytes == keeping.outcome.attachment?.bytes)
        #expect(result.outcome.sniff == keeping.outcome.sniff)
        let rejected = await dropping.process(payload(url: "https://cdn.example.com/hero.webp", type: "jpg"))
        #expect(rejected.outcome.reason == .contentUnrecognized)
        #expect(Fixtures.files(in: empty).isEmpty)
    }
}
