import AssetServer
import Foundation
import RichPush
import RichPushRuns
import TestSupport
import Testing

/// Shared downloads (`batch --share-downloads`) with real downloads: the shell carries out the
/// decisions of ``SharedDownloadsMachine`` (tested in every order in SharedDownloadsMachineTests).
@Suite struct SharedDownloadsTests {
    let rig: LocalRig
    var server: AssetServer { rig.server }

    init() throws { rig = try LocalRig() }

    func cleanUp() { rig.cleanUp() }

    func shared() throws -> SharedDownloads {
        SharedDownloads(engine: rig.engine, store: try AttachmentStore(folder: rig.folder + "/store"))
    }

    func request(_ url: String, within budget: Duration) -> FetchRequest {
        FetchRequest(url: url, deadline: .now + budget, policy: Fixtures.fetchPolicy(mapping: server))
    }

    static func code(_ entry: SharedDownloads.Entry) -> String {
        switch entry {
        case .success: return "ok"
        case .failure(let error): return error.code.description
        }
    }

    @Test func cancellingTheBatchEndsASharedDownloadAtOnce() async throws {
        defer { cleanUp() }
        // The server's answer comes after `delay` seconds (the budget is longer still): a batch that ends
        // before then was ended by its cancellation.
        let delay = TimeScale.scaled(60)
        let input = rig.folder + "/in"
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        for index in 0..<4 {
            let text =
                #"{"aps":{"alert":"n\#(index)","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.png?delay=\#(delay * 1000)","type":"png"}}}"#
            try Data(text.utf8).write(to: URL(fileURLWithPath: input + "/p\(index).json"))
        }
        let attachments = try AttachmentStore(folder: rig.folder + "/out/attachments")
        let service = ServiceExtension(
            engine: rig.engine, store: attachments,
            policy: Fixtures.extensionPolicy(mapping: server, budget: .seconds(90)),
            sharedDownloads: SharedDownloads(engine: rig.engine, store: attachments))
        let runner = BatchRunner(
            items: try BatchInput.items(at: input, recursive: false), service: service,
            output: try AttachmentStore(folder: rig.folder + "/out"), concurrency: 4, force: false)
        let started = ContinuousClock.now
        let run = Task { try await runner.run() }
        try await Task.sleep(for: .milliseconds(500))
        run.cancel()
        let summary = try await run.value
        #expect(
            ContinuousClock.now - started < .seconds(delay),
            "the \(delay) s download is cancelled with the batch, before the server answers")
        #expect(summary.interrupted && summary.recorded == 0)
    }

    @Test func aCancelledWaiterStopsWaitingWhileTheOthersGetTheDownload() async throws {
        defer { cleanUp() }
        let downloads = try shared()
        // The order of events, not a time: the cancelled waiter returns before the download it left
        // ends (each task notes when its call returned, so a busy test thread cannot blur the order).
        let delay = 12
        let url = "https://cdn.example.com/hero.png?delay=\(delay * 1000)"
        let staying = Task {
            (Self.code(await downloads.download(request(url, within: .seconds(delay + 60)))), ContinuousClock.now)
        }
        try await Task.sleep(for: .milliseconds(200))
        let leaving = Task {
            (Self.code(await downloads.download(request(url, within: .seconds(delay + 60)))), ContinuousClock.now)
        }
        try await Task.sleep(for: .milliseconds(200))
        leaving.cancel()
        let (left, leftAt) = await leaving.value
        let (stayed, stayedAt) = await staying.value
        #expect(left == "cancelled")
        #expect(stayed == "ok")
        #expect(leftAt < stayedAt, "the cancelled waiter waited for the \(delay) s download")
        #expect(server.requestCount == 1)
        await downloads.removeAll()
    }

    /// The lock discipline under a race: forty payloads ask for one URL and every other one is
    /// cancelled at once (before, while or after it registers). Every one returns; those never
    /// cancelled get the download; each cancelled one gets `cancelled` or, if the download beat its
    /// cancellation, the download.
    @Test func manyWaitersWithHalfCancelledAtOnceAllReturn() async throws {
        defer { cleanUp() }
        let downloads = try shared()
        let url = "https://cdn.example.com/hero.png?delay=300"
        let tasks = (0..<40).map { _ in
            Task { Self.code(await downloads.download(request(url, within: .seconds(60)))) }
        }
        for (index, task) in tasks.enumerated() where index % 2 == 1 { task.cancel() }
        for (index, task) in tasks.enumerated() {
            let code = await task.value
            if index % 2 == 0 {
                #expect(code == "ok", "payload \(index)")
            } else {
                #expect(code == "cancelled" || code == "ok", "payload \(index): \(code)")
            }
        }
        #expect(server.requestCount <= 20, "a download restarts only when every waiter had left it")
        await downloads.removeAll()
    }

    @Test func aPayloadsOwnDeadlineIsNotPassedOnToLaterPayloads() async throws {
        defer { cleanUp() }
        let downloads = try shared()
        let url = "https://cdn.example.com/hero.png?delay=1000"
        #expect(Self.code(await downloads.download(request(url, within: .milliseconds(300)))) == "deadline-exceeded")
        #expect(Self.code(await downloads.download(request(url, within: .seconds(60)))) == "ok")
        await downloads.removeAll()
    }

    @Test func aWaiterWithTimeLeftTriesAgainAfterAnotherPayloadsDeadline() async throws {
        defer { cleanUp() }
        let downloads = try shared()
        let url = "https://cdn.example.com/hero.png?delay=1000"
        let short = Task { Self.code(await downloads.download(request(url, within: .milliseconds(400)))) }
        try await Task.sleep(for: .milliseconds(100))
        let long = Task { Self.code(await downloads.download(request(url, within: .seconds(60)))) }
        #expect(await short.value == "deadline-exceeded")
        #expect(await long.value == "ok")
        await downloads.removeAll()
    }

    @Test(arguments: ["status=404", "size=20000000"])
    func failuresOfTheURLItselfAreKept(fault: String) async throws {
        defer { cleanUp() }
        let downloads = try shared()
        let url = "https://cdn.example.com/hero.png?\(fault)"
        var policy = Fixtures.fetchPolicy(mapping: server)
        policy.maxBytes = 1_000_000
        let first = await downloads.download(FetchRequest(url: url, deadline: .now + .seconds(60), policy: policy))
        let second = await downloads.download(FetchRequest(url: url, deadline: .now + .seconds(60), policy: policy))
        #expect(Self.code(first) == (fault.hasPrefix("status") ? "http-status" : "too-large"))
        #expect(Self.code(second) == Self.code(first))
        #expect(server.requestCount == 1)
    }
}
