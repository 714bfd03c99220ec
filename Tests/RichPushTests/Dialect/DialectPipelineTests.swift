import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// Each dialect through the one pipeline, against the embedded server: naming from the real
/// response, Apple's verdict on the file, several attachments, failure and expiry content.
@Suite struct DialectPipelineTests {
    let rig: LocalRig
    let assets: String

    /// A server over a folder with the samples' assets plus `avatar`, a PNG without an extension.
    init() throws {
        assets = try Fixtures.temporaryFolder("richpush-dialect-assets")
        for name in ["hero.jpg", "hero.png", "banner.gif", "clip.mp4", "hero.webp"] {
            try FileManager.default.copyItem(atPath: Fixtures.assets + "/" + name, toPath: assets + "/" + name)
        }
        try FileManager.default.copyItem(atPath: Fixtures.assets + "/hero.png", toPath: assets + "/avatar")
        let server = try Fixtures.startServer(root: assets)
        rig = LocalRig(server: server, engine: try FetchEngine(loops: 1), folder: try Fixtures.temporaryFolder())
    }

    func cleanUp() {
        rig.cleanUp()
        try? FileManager.default.removeItem(atPath: assets)
    }

    /// The default budget is one the suite's start-up load cannot exhaust; the expiry test passes its own.
    func process(_ payload: String, sdk: DialectChoice, budget: Duration = .seconds(60)) async throws -> Outcome {
        var policy = Fixtures.extensionPolicy(mapping: rig.server, budget: budget)
        policy.dialect = sdk
        let store = try AttachmentStore(folder: rig.folder + "/out")
        defer { store.removeScratch() }
        let service = ServiceExtension(engine: rig.engine, store: store, policy: policy)
        let outcome = await service.process(Array(payload.utf8)).outcome
        #expect(OutputSchemas.violations(of: outcome.json.text, against: "outcome") == [], "\(outcome.json.text)")
        return outcome
    }

    static let aps = #""aps":{"alert":{"title":"T","body":"B"},"mutable-content":1}"#

    @Test(arguments: [
        // An extension-less URL: only OneSignal's MIME map or its ?filename= names it.
        (
            "onesignal", #"{\#(aps),"att":{"a":"https://cdn.example.com/avatar?type=image/png"}}"#, "attached",
            "content-type"
        ),
        ("onesignal", #"{\#(aps),"att":{"a":"https://cdn.example.com/avatar"}}"#, "fallback", "none"),
        (
            "onesignal", #"{\#(aps),"att":{"a":"https://cdn.example.com/avatar?filename=a.png"}}"#, "attached",
            "query-filename"
        ),
        // suggestedFilename appends .png for image/png, so Firebase and Iterable attach it too.
        (
            "firebase", #"{\#(aps),"fcm_options":{"image":"https://cdn.example.com/avatar?type=image/png"}}"#,
            "attached", "content-type"
        ),
        ("iterable", #"{\#(aps),"itbl":{"attachment-url":"https://cdn.example.com/avatar"}}"#, "fallback", "none"),
        // Content-Disposition names the file for Customer.io.
        (
            "customerio",
            #"{\#(aps),"CIO-Delivery-ID":"d","CIO-Delivery-Token":"t","CIO":{"push":{"image":"https://cdn.example.com/avatar?disposition=attachment%3B%20filename%3D%22promo.png%22"}}}"#,
            "attached", "content-disposition"
        ),
        // Airship: no known extension, so a type hint from the bytes (iOS honouring it is inferred).
        (
            "airship", #"{\#(aps),"com.urbanairship.media_attachment":{"url":"https://cdn.example.com/avatar"}}"#,
            "attached", "type-hint"
        ),
        // Expo names a PNG .jpg; ImageIO still shows it.
        (
            "expo", #"{\#(aps),"body":{"_richContent":{"image":"https://cdn.example.com/hero.png"}}}"#, "attached",
            "fixed"
        ),
        // notifee: .webp from the URL, which iOS has no attachment type for.
        (
            "notifee", #"{\#(aps),"notifee_options":{"image":"https://cdn.example.com/hero.webp"}}"#, "fallback",
            "url-path"
        ),
    ])
    func namesFromTheRealResponseAndLetsAppleDecide(sdk: String, payload: String, verdict: String, rule: String)
        async throws
    {
        defer { cleanUp() }
        let dialect = try #require(Dialect.named(sdk))
        let outcome = try await process(payload, sdk: .fixed(dialect))
        #expect(outcome.verdict.rawValue == verdict, "\(outcome.summaryLine)")
        #expect(outcome.sdk == sdk)
        #expect(outcome.sdkFile?.rule == rule, "\(String(describing: outcome.sdkFile))")
        #expect(
            outcome.message.contains("\(dialect.title) named it") || outcome.verdict != .attached, "\(outcome.message)")
        if outcome.verdict == .attached {
            let file = try #require(outcome.attachment?.file)
            #expect(FileManager.default.fileExists(atPath: file), "the attachment is stored")
            #expect(outcome.delivered?.content == "composed")
        } else {
            #expect(outcome.attachment == nil)
        }
    }

    @Test func aBrazePayloadIsNoAttachmentForOneSignalAndAttachedForAuto() async throws {
        defer { cleanUp() }
        let payload = #"{\#(Self.aps),"ab":{"att":{"url":"https://cdn.example.com/hero.jpg","type":"jpg"}}}"#
        let oneSignal = try await process(payload, sdk: .fixed(.oneSignal))
        #expect(oneSignal.verdict == .noAttachment)
        #expect(oneSignal.delivered?.content == "original")
        let auto = try await process(payload, sdk: .auto)
        #expect(auto.verdict == .attached)
        #expect(auto.sdk == "braze")
    }

    @Test func oneSignalKeepsTheAttachmentsThatWorkAndSaysTheOrderIsUndefined() async throws {
        defer { cleanUp() }
        let payload =
            #"{\#(Self.aps),"os_data":{"i":"n1","att":{"a":"https://cdn.example.com/missing.jpg","b":"https://cdn.example.com/banner.gif"}}}"#
        let outcome = try await process(payload, sdk: .fixed(.oneSignal))
        #expect(outcome.verdict == .attached, "\(outcome.summaryLine)")
        let items = try #require(outcome.attachments)
        #expect(items.map(\.id) == ["a", "b"])
        #expect(items.map(\.verdict) == [.fallback, .attached])
        #expect(items[0].reason == .httpStatus, "the 404 page is named .jpg and refused by iOS")
        #expect(items[0].sdkFile?.fileExtension == "jpg")
        #expect(outcome.attachment?.uti == "com.compuserve.gif", "the thumbnail is the first shown")
        #expect(outcome.message.contains("undefined"))
        #expect(outcome.delivered?.attachments == 1)
    }

    @Test func airshipDropsEveryAttachmentAndItsOverridesWhenOneFails() async throws {
        defer { cleanUp() }
        let payload =
            #"{\#(Self.aps),"com.urbanairship.media_attachment":{"url":["https://cdn.example.com/hero.jpg","https://cdn.example.com/missing.png"],"content":{"title":"New"}}}"#
        let outcome = try await process(payload, sdk: .fixed(.airship))
        #expect(outcome.verdict == .fallback, "\(outcome.summaryLine)")
        #expect(outcome.attachment == nil)
        let items = try #require(outcome.attachments)
        #expect(items.count == 2)
        #expect(items.contains { $0.verdict == .attached }, "the good one downloaded, and is dropped anyway")
        #expect(outcome.delivered?.content == "original")
        #expect(outcome.delivered?.title == "T", "the override is lost")
        let both =
            #"{\#(Self.aps),"com.urbanairship.media_attachment":{"url":["https://cdn.example.com/hero.jpg","https://cdn.example.com/clip.mp4"],"content":{"title":"New"}}}"#
        let shown = try await process(both, sdk: .fixed(.airship))
        #expect(shown.verdict == .attached)
        #expect(shown.attachments?.filter { $0.verdict == .attached }.count == 2)
        #expect(shown.delivered?.title == "New")
        #expect(shown.delivered?.attachments == 2)
    }

    @Test func expiryDeliversEachSDKsOwnContent() async throws {
        defer { cleanUp() }
        // 30 times the 1 s budget, both stretched alike (Fixtures.extensionPolicy scales the budget).
        let slow = "https://cdn.example.com/hero.jpg?delay=\(TimeScale.scaled(30) * 1000)"
        let iterable = try await process(
            #"{\#(Self.aps),"itbl":{"messageId":"m","attachment-url":"\#(slow)","actionButtons":[{"identifier":"a"}]}}"#,
            sdk: .fixed(.iterable), budget: .seconds(1))
        #expect(iterable.verdict == .expired, "\(iterable.summaryLine)")
        #expect(iterable.delivered?.content == "best-attempt")
        #expect(iterable.delivered?.changes.isEmpty == false)
        let airship = try await process(
            #"{\#(Self.aps),"com.urbanairship.media_attachment":{"url":"\#(slow)","content":{"title":"New"}}}"#,
            sdk: .fixed(.airship), budget: .seconds(1))
        #expect(airship.verdict == .expired)
        #expect(airship.delivered?.content == "original")
        #expect(airship.delivered?.title == "T")
    }

    @Test func noSDKFieldsWithoutSDKOption() async throws {
        defer { cleanUp() }
        var policy = Fixtures.extensionPolicy(mapping: rig.server, budget: .seconds(60))
        policy.dialect = nil
        let service = ServiceExtension(engine: rig.engine, store: nil, policy: policy)
        let outcome = await service.process(
            Array(#"{\#(Self.aps),"ab":{"att":{"url":"https://cdn.example.com/hero.jpg","type":"jpg"}}}"#.utf8)
        ).outcome
        #expect(outcome.verdict == .attached)
        #expect(outcome.sdk == nil && outcome.delivered == nil && outcome.sdkFile == nil)
    }
}

/// The SDKs' own calls against the embedded server's mock endpoints, and modelled without one.
@Suite struct SDKCallTests {
    let rig: LocalRig

    init() throws { rig = try LocalRig(loops: 1) }

    static let customerIO =
        #"{"aps":{"alert":"a","mutable-content":1},"CIO-Delivery-ID":"d1","CIO-Delivery-Token":"t1","CIO":{"push":{"image":"https://cdn.example.com/hero.jpg"}}}"#

    /// The default budget is one the suite's start-up load cannot exhaust; the expiry test passes its own.
    func process(_ payload: String, budget: Duration = .seconds(60), configure: (inout ExtensionPolicy) -> Void)
        async throws -> Outcome
    {
        var policy = Fixtures.extensionPolicy(mapping: rig.server, budget: budget)
        policy.dialect = .auto
        configure(&policy)
        let service = ServiceExtension(engine: rig.engine, store: nil, policy: policy)
        let outcome = await service.process(Array(payload.utf8)).outcome
        #expect(OutputSchemas.violations(of: outcome.json.text, against: "outcome") == [], "\(outcome.json.text)")
        return outcome
    }

    @Test func customerIOSendsItsDeliveryMetricToTheEndpointBeforeDisplay() async throws {
        defer { rig.cleanUp() }
        let outcome = try await process(Self.customerIO) { $0.sdkCalls.endpoint = "https://cdn.example.com" }
        #expect(outcome.verdict == .attached, "\(outcome.summaryLine)")
        let call = try #require(outcome.sdkCalls?.first)
        #expect(call.name == "delivery metric" && call.method == "POST" && call.blocksDisplay)
        #expect(call.url == "https://cdn.example.com/v1/track")
        #expect(call.status == 200, "the mock endpoint answers: \(String(describing: call.error))")
        #expect(call.modelled == false)
    }

    @Test func aSlowDeliveryMetricMakesThePushExpire() async throws {
        defer { rig.cleanUp() }
        // The image takes milliseconds (15 s of room: the suite's start-up load has delayed a first
        // transfer by more than 5 s); the metric's answer is held twice as long as the budget, both
        // stretched alike (Fixtures.extensionPolicy scales the budget).
        let outcome = try await process(Self.customerIO, budget: .seconds(15)) {
            $0.sdkCalls.endpoint = "https://cdn.example.com/?delay=\(TimeScale.scaled(30) * 1000)"
        }
        #expect(outcome.verdict == .expired, "\(outcome.summaryLine) \(outcome.json.text)")
        #expect(outcome.message.contains("delivery metric"))
        #expect(outcome.delivered?.content == "composed", "the image was done: Customer.io shows it")
        #expect(outcome.sdkCalls?.first?.status == nil)
    }

    @Test func withoutAnEndpointTheCallIsModelledAndCountsInTheTimeToDisplay() async throws {
        defer { rig.cleanUp() }
        let outcome = try await process(Self.customerIO) { $0.sdkCalls.latency = .milliseconds(300) }
        let call = try #require(outcome.sdkCalls?.first)
        #expect(call.modelled && call.url == nil && call.latencyMilliseconds == 300)
        #expect(outcome.elapsedMilliseconds >= 300, "display waited for the modelled metric")
    }

    @Test func oneSignalSendsItsReceiptAfterDisplayOnlyWithTheFlag() async throws {
        defer { rig.cleanUp() }
        let payload =
            #"{"aps":{"alert":"a","mutable-content":1},"os_data":{"i":"n-42","att":{"a":"https://cdn.example.com/hero.jpg"}}}"#
        let off = try await process(payload) { $0.sdkCalls.endpoint = "https://cdn.example.com" }
        #expect(off.sdkCalls == nil, "no receipt without the App Group flag")
        let on = try await process(payload) {
            $0.sdkCalls.endpoint = "https://cdn.example.com"
            $0.sdkCalls.receipts = true
            $0.sdkCalls.maxJitter = .milliseconds(50)
        }
        let call = try #require(on.sdkCalls?.first)
        #expect(call.method == "PUT" && call.url == "https://cdn.example.com/notifications/n-42/report_received")
        #expect(call.status == 200, "\(String(describing: call.error))")
        #expect(!call.blocksDisplay && (call.jitterMilliseconds ?? 100) <= 50)
        #expect(on.verdict == .attached)
    }

    @Test func theEndpointKeepsItsQueryAfterTheCallsPath() {
        #expect(
            SDKCallPolicy.url(endpoint: "http://127.0.0.1:8080/base/?delay=5", path: "/v1/track")
                == "http://127.0.0.1:8080/base/v1/track?delay=5")
        #expect(
            SDKCallPolicy.url(endpoint: "http://127.0.0.1:8080/?delay=5", path: "/a1?os=iOS&z=A")
                == "http://127.0.0.1:8080/a1?os=iOS&z=A&delay=5")
        #expect(
            SDKCallPolicy.url(endpoint: "http://127.0.0.1:8080", path: "/a1?os=iOS")
                == "http://127.0.0.1:8080/a1?os=iOS")
    }

    static let cleverTap =
        #"{"aps":{"alert":"a","mutable-content":1},"wzrk_pn":true,"wzrk_id":"1700000000_1","W$cid":"c9","ct_mediaUrl":"https://cdn.example.com/hero.jpg","ct_mediaType":"image"}"#

    @Test func cleverTapSendsNotificationViewedBesideTheDownloadOnlyWhenTheAppCallsIt() async throws {
        defer { rig.cleanUp() }
        let off = try await process(Self.cleverTap) { $0.sdkCalls.endpoint = "https://cdn.example.com" }
        #expect(off.sdkCalls == nil, "the call needs app code in the extension (--sdk-receipts)")
        let on = try await process(Self.cleverTap) {
            $0.sdkCalls.endpoint = "https://cdn.example.com"
            $0.sdkCalls.receipts = true
        }
        #expect(on.verdict == .attached, "\(on.summaryLine)")
        let call = try #require(on.sdkCalls?.first)
        #expect(call.name == "Notification Viewed" && call.method == "POST" && !call.blocksDisplay)
        let url = try #require(call.url)
        #expect(url.hasPrefix("https://cdn.example.com/a1?os=iOS&t=70700&z=RICHPUSH-ACCOUNT&ts="), "\(url)")
        // The mock endpoint reads CleverTap's own query parameters as no faults: 200, not 400.
        #expect(call.status == 200, "\(String(describing: call.error))")
    }

    /// The extension's process ends with the budget: CleverTap's call (1 s after arrival, 10 s of its own
    /// timeout) to an endpoint that holds its answer is cut off then, not at its own timeout, so a
    /// command never outlives `--budget`.
    @Test func aCallStillWaitingWhenTheBudgetEndsIsCutOff() async throws {
        defer { rig.cleanUp() }
        let outcome = try await process(Self.cleverTap) {
            // Not scaled: the budget must end before the call's own 10 s timeout, whatever the load.
            $0.budget = .seconds(3)
            $0.sdkCalls.endpoint = "https://cdn.example.com/?delay=\(TimeScale.scaled(60) * 1000)"
            $0.sdkCalls.receipts = true
        }
        let call = try #require(outcome.sdkCalls?.first)
        #expect(call.status == nil)
        #expect(call.error?.hasPrefix("cut off: no answer when the extension's process ended") == true, "\(call)")
    }

    /// Airship drops an entry its URL(string:) cannot read: on a phone with the RFC 1738/1808 parser,
    /// an entry with a space is dropped and the rest attached; on iOS 17 both are.
    @Test func airshipDropsWhatThePhonesParserCannotRead() async throws {
        defer { rig.cleanUp() }
        let payload =
            #"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"com.urbanairship.media_attachment":{"urls":[{"url":"https://cdn.example.com/hero.jpg?v=a b","url_id":"a"},{"url":"https://cdn.example.com/hero.jpg","url_id":"b"}]}}"#
        let new = try await process(payload) { _ in }
        #expect(new.attachments?.count == 2, "\(new.json.text)")
        let old = try await process(payload) { $0.device = DeviceVersion(ios: IOSVersion(16)) }
        #expect(old.verdict == .attached && old.attachments?.count == 1, "\(old.json.text)")
        #expect(old.warnings.contains { $0.code == "media-entry-dropped" && $0.message.contains("RFC 1738/1808") })
    }

    @Test func cleverTapsViewedEventCarriesThePayloadsWzrkKeys() throws {
        let call = try #require(Dialect.cleverTap.networkCalls.first)
        #expect(call.start == .withDownload(delay: .seconds(1)) && call.timeout == .seconds(10) && call.optIn)
        let root = try JSONValue.parse(Array(Self.cleverTap.utf8))
        let request = try #require(call.request?(SDKCallContext(root: root, epochSeconds: 1_800_000_000)))
        #expect(request.path == "/a1?os=iOS&t=70700&z=RICHPUSH-ACCOUNT&ts=1800000000")
        #expect(request.headers.contains("X-CleverTap-Account-Id: RICHPUSH-ACCOUNT"))
        #expect(request.headers.contains("Content-Type: application/json; charset=utf-8"))
        let body = try JSONValue.parse(request.body)
        guard case .array(let batch) = body, batch.count == 2 else {
            Issue.record("a batch header and one event: \(body.text)")
            return
        }
        #expect(batch[0]["type"] == .string("meta"))
        #expect(batch[1]["evtName"] == .string("Notification Viewed"))
        #expect(batch[1]["evtData"]?["wzrk_id"] == .string("1700000000_1"))
        #expect(batch[1]["evtData"]?["wzrk_cid"] == .string("c9"), "W$ keys are renamed wzrk_")
        #expect(batch[1]["evtData"]?["wzrk_cts"] == .number("1800000000"))
        #expect(batch[1]["evtData"]?["ct_mediaUrl"] == nil, "only the wzrk_ keys")
    }

    @Test func aCallDisplayDoesNotWaitForIsNotCountedInTheTimeToDisplay() async throws {
        defer { rig.cleanUp() }
        // The same payload without the call first: its time to display, under this test's own load (and
        // with the engine's cold start), is what display takes without waiting for anything.
        let alone = try await process(Self.cleverTap) { _ in }
        #expect(alone.sdkCalls == nil)
        let outcome = try await process(Self.cleverTap) {
            $0.sdkCalls.receipts = true
            $0.sdkCalls.latency = .seconds(8)
        }
        let call = try #require(outcome.sdkCalls?.first)
        #expect(call.modelled && call.latencyMilliseconds == 8000)
        // Waiting for the call (it starts 1 s after arrival and takes 8 s) would hold display to 9 s:
        // past the time alone plus the call's 8 s whenever display alone takes under a second.
        #expect(
            outcome.elapsedMilliseconds < alone.elapsedMilliseconds + 8000,
            "display waited for the modelled call: \(outcome.elapsedMilliseconds) ms, \(alone.elapsedMilliseconds) ms without it"
        )
    }

    @Test func customerIOsResourceTimeoutEndsTheDownloadBeforeTheBudget() async throws {
        defer { rig.cleanUp() }
        #expect(Dialect.customerIO.resourceTimeout == .seconds(30), "timeoutIntervalForResource in its session")
        // The same description with a 1 s resource timeout: a 3 s answer outlives it, not the 60 s budget.
        var dialect = Dialect.customerIO
        dialect.resourceTimeout = .seconds(1)
        let payload =
            #"{"aps":{"alert":"a","mutable-content":1},"CIO-Delivery-ID":"d1","CIO-Delivery-Token":"t1","CIO":{"push":{"image":"https://cdn.example.com/hero.jpg?delay=3000"}}}"#
        let outcome = try await process(payload) { $0.dialect = .fixed(dialect) }
        #expect(outcome.verdict == .fallback, "\(outcome.summaryLine)")
        #expect(outcome.reason == .deadlineExceeded)
        #expect(outcome.message.contains("timeoutIntervalForResource"), "\(outcome.message)")
    }
}
