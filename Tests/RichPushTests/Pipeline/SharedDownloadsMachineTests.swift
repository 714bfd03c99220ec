import Testing

@testable import RichPush

/// The shared downloads' decisions in every state, and in every order payloads can ask, leave and
/// finish: no sockets, no servers, no sleeps.
@Suite struct SharedDownloadsMachineTests {
    typealias Machine = SharedDownloadsMachine<String>

    static let url = "https://cdn.example.com/hero.png"

    @Test func theFirstWaiterStartsTheDownloadAndTheOthersJoinIt() {
        var machine = Machine()
        let first = machine.register()
        let second = machine.register()
        #expect(machine.pending == [first, second])
        #expect(machine.attend(first, url: Self.url) == .start(generation: first))
        #expect(machine.attend(second, url: Self.url) == .wait)
        #expect(machine.pending.isEmpty)
        #expect(
            machine.finish(Self.url, generation: first, entry: "ok", settlement: .downloaded(file: "/s/a"))
                == .deliver([.init(waiter: first, fromOther: false), .init(waiter: second, fromOther: true)]))
        #expect(machine.files == ["/s/a"])
        let later = machine.register()
        #expect(machine.attend(later, url: Self.url) == .kept("ok"), "a success is kept for later payloads")
    }

    @Test func eachURLHasItsOwnDownload() {
        var machine = Machine()
        let first = machine.register()
        let second = machine.register()
        #expect(machine.attend(first, url: Self.url) == .start(generation: first))
        #expect(machine.attend(second, url: Self.url + "?other") == .start(generation: second))
        #expect(
            machine.finish(Self.url + "?other", generation: second, entry: "404", settlement: .failed(.httpStatus))
                == .deliver([.init(waiter: second, fromOther: false)]))
        #expect(machine.attend(machine.register(), url: Self.url) == .wait, "the first URL is still running")
    }

    /// Which failures later payloads reuse: exactly those of the URL itself.
    @Test(arguments: FetchError.Code.all)
    func aFailureIsKeptOnlyWhenItDependsOnTheURLAlone(code: FetchError.Code) {
        let ofTheURL: Set<FetchError.Code> = [
            .invalidURL, .invalidHostMapping, .schemeNotAllowed, .redirectNotAllowed, .tooManyRedirects, .dnsFailed,
            .connectFailed, .tlsFailed, .tooLarge, .httpStatus, .protocolError,
        ]
        #expect(Machine.dependsOnURLAlone(code) == ofTheURL.contains(code))
        var machine = Machine()
        let first = machine.register()
        _ = machine.attend(first, url: Self.url)
        let action = machine.finish(Self.url, generation: first, entry: code.description, settlement: .failed(code))
        #expect(action == .deliver([.init(waiter: first, fromOther: false)]))
        #expect(machine.files.isEmpty)
        let later = machine.register()
        let expected: Machine.AttendAction =
            ofTheURL.contains(code) ? .kept(code.description) : .start(generation: later)
        #expect(machine.attend(later, url: Self.url) == expected)
    }

    @Test func aWaiterCancelledBeforeItRegistersReturnsCancelledAtOnce() {
        var machine = Machine()
        let waiter = machine.register()
        #expect(machine.leave(waiter, url: Self.url) == .init())
        #expect(machine.cancelledEarly == [waiter])
        #expect(machine.attend(waiter, url: Self.url) == .cancelled)
        #expect(machine.slots.isEmpty, "it started nothing")
        #expect(machine.cancelledEarly.isEmpty && machine.pending.isEmpty)
    }

    @Test func aLeavingWaiterIsResumedAndTheDownloadGoesOnForTheOthers() {
        var machine = Machine()
        let first = machine.register()
        let second = machine.register()
        _ = machine.attend(first, url: Self.url)
        _ = machine.attend(second, url: Self.url)
        #expect(machine.leave(first, url: Self.url) == .init(resumeCancelled: true))
        #expect(
            machine.finish(Self.url, generation: first, entry: "ok", settlement: .downloaded(file: "/s/a"))
                == .deliver([.init(waiter: second, fromOther: true)]),
            "the download keeps the generation of the payload that left")
    }

    @Test func theLastWaiterLeavingCancelsTheDownloadAndALaterAskStartsAgain() {
        var machine = Machine()
        let first = machine.register()
        let second = machine.register()
        _ = machine.attend(first, url: Self.url)
        _ = machine.attend(second, url: Self.url)
        #expect(machine.leave(second, url: Self.url) == .init(resumeCancelled: true))
        #expect(machine.leave(first, url: Self.url) == .init(resumeCancelled: true, cancelDownload: first))
        #expect(machine.slots.isEmpty)
        let third = machine.register()
        #expect(machine.attend(third, url: Self.url) == .start(generation: third))
        // The abandoned download ends later: its file is removed and the new download is untouched.
        #expect(
            machine.finish(Self.url, generation: first, entry: "ok", settlement: .downloaded(file: "/s/old"))
                == .discard(file: "/s/old"))
        #expect(
            machine.finish(Self.url, generation: first, entry: "c", settlement: .failed(.cancelled))
                == .discard(file: nil))
        #expect(machine.files.isEmpty)
        #expect(
            machine.finish(Self.url, generation: third, entry: "ok", settlement: .downloaded(file: "/s/new"))
                == .deliver([.init(waiter: third, fromOther: false)]))
        #expect(machine.files == ["/s/new"])
    }

    @Test func leavingAfterTheDeliveryOrAKeptEntryChangesNothing() {
        var machine = Machine()
        let first = machine.register()
        _ = machine.attend(first, url: Self.url)
        _ = machine.finish(Self.url, generation: first, entry: "ok", settlement: .downloaded(file: "/s/a"))
        let before = machine
        #expect(machine.leave(first, url: Self.url) == .init())
        let later = machine.register()
        _ = machine.attend(later, url: Self.url)
        #expect(machine.leave(later, url: Self.url) == .init())
        #expect(machine.slots == before.slots && machine.files == before.files)
    }

    @Test func removeAllHandsBackTheKeptFilesOnceAndTheRunningDownloads() {
        var machine = Machine()
        let first = machine.register()
        let second = machine.register()
        _ = machine.attend(first, url: Self.url)
        _ = machine.attend(second, url: Self.url + "?b")
        _ = machine.finish(Self.url, generation: first, entry: "ok", settlement: .downloaded(file: "/s/a"))
        #expect(machine.removeAll() == .init(files: ["/s/a"], cancel: [second]))
        #expect(machine.removeAll() == .init(files: [], cancel: [second]), "each file is removed once")
        #expect(
            machine.finish(Self.url + "?b", generation: second, entry: "c", settlement: .failed(.cancelled))
                == .deliver([.init(waiter: second, fromOther: false)]), "the cancelled download still ends its waiters")
        #expect(machine.removeAll() == .init(files: [], cancel: []))
    }

    /// Past the limit, the outcome used least recently is forgotten (its file stays until the end,
    /// as a payload may be linking it) and its URL is downloaded again.
    @Test func keepsAtMostTheLimitForgettingTheLeastRecentlyUsed() {
        var machine = Machine(keptLimit: 2)
        func download(_ url: String, _ settlement: Machine.Settlement) {
            let waiter = machine.register()
            guard case .start(let generation) = machine.attend(waiter, url: url) else {
                Issue.record("\(url) did not start")
                return
            }
            _ = machine.finish(url, generation: generation, entry: url, settlement: settlement)
        }
        download("a", .downloaded(file: "/s/a"))
        download("b", .failed(.httpStatus))
        #expect(machine.attend(machine.register(), url: "a") == .kept("a"), "a is now the most recent")
        download("c", .downloaded(file: "/s/c"))
        #expect(machine.keptUse.count == 2)
        #expect(machine.slots["b"] == nil, "b, the least recently used, is forgotten")
        #expect(machine.attend(machine.register(), url: "a") == .kept("a"))
        #expect(machine.attend(machine.register(), url: "c") == .kept("c"))
        let again = machine.register()
        #expect(machine.attend(again, url: "b") == .start(generation: again))
        #expect(machine.files == ["/s/a", "/s/c"])
        _ = machine.finish("b", generation: again, entry: "b", settlement: .downloaded(file: "/s/b"))
        #expect(machine.slots["a"] == nil, "a was last handed out before c")
        #expect(machine.attend(machine.register(), url: "c") == .kept("c"))
        #expect(machine.removeAll().files == ["/s/a", "/s/c", "/s/b"], "forgotten files are still removed")
        #expect(Machine(keptLimit: 0).keptLimit == 1)
        #expect(Machine().keptLimit == 1024)
    }

    /// A waiter asks again only after another payload's own failure, with time left and not cancelled.
    @Test func aWaiterTriesAgainOnlyAfterAnotherPayloadsOwnFailure() {
        let own = Machine.Settlement.failed(.deadlineExceeded)
        #expect(Machine.triesAgain(fromOther: true, settlement: own, cancelled: false, timeLeft: true))
        #expect(!Machine.triesAgain(fromOther: false, settlement: own, cancelled: false, timeLeft: true))
        #expect(!Machine.triesAgain(fromOther: true, settlement: own, cancelled: true, timeLeft: true))
        #expect(!Machine.triesAgain(fromOther: true, settlement: own, cancelled: false, timeLeft: false))
        #expect(
            !Machine.triesAgain(fromOther: true, settlement: .failed(.httpStatus), cancelled: false, timeLeft: true))
        #expect(
            !Machine.triesAgain(
                fromOther: true, settlement: .downloaded(file: "/s/a"), cancelled: false, timeLeft: true))
    }

    // MARK: - Every order

    enum Event: Equatable, CustomStringConvertible {
        case attend(UInt64)
        case leave(UInt64)
        /// The oldest download still running ends (with the scenario's outcome, or `cancelled` if it was cancelled).
        case finish

        var description: String {
            switch self {
            case .attend(let waiter): "attend(\(waiter))"
            case .leave(let waiter): "leave(\(waiter))"
            case .finish: "finish"
            }
        }
    }

    enum Outcome: CaseIterable {
        case success, failureOfTheURL, failureOfThePayload
    }

    /// The owner's side: the tasks and continuations the machine's actions start and resume.
    struct World {
        var machine = Machine()
        let outcome: Outcome
        /// Downloads started and not finished, oldest first, and those of them cancelled.
        var running: [UInt64] = []
        var cancelled: Set<UInt64> = []
        var waiting: Set<UInt64> = []
        var received: [UInt64: String] = [:]
        var discarded: [String] = []
        var problems: [String] = []

        init(outcome: Outcome, waiters: Int) {
            self.outcome = outcome
            for _ in 0..<waiters { _ = machine.register() }
        }

        mutating func deliver(_ entry: String, to waiter: UInt64) {
            if received[waiter] != nil { problems.append("waiter \(waiter) resumed twice") }
            received[waiter] = entry
            waiting.remove(waiter)
        }

        mutating func apply(_ event: Event) {
            switch event {
            case .attend(let waiter):
                switch machine.attend(waiter, url: SharedDownloadsMachineTests.url) {
                case .cancelled: deliver("cancelled", to: waiter)
                case .kept(let entry): deliver(entry, to: waiter)
                case .wait: waiting.insert(waiter)
                case .start(let generation):
                    if !running.filter({ !cancelled.contains($0) }).isEmpty {
                        problems.append("a second download of the URL while one runs")
                    }
                    running.append(generation)
                    waiting.insert(waiter)
                }
            case .leave(let waiter):
                let action = machine.leave(waiter, url: SharedDownloadsMachineTests.url)
                if action.resumeCancelled {
                    if !waiting.contains(waiter) { problems.append("resumed \(waiter), which was not waiting") }
                    deliver("cancelled", to: waiter)
                }
                if let generation = action.cancelDownload {
                    if !running.contains(generation) { problems.append("cancelled a download not running") }
                    cancelled.insert(generation)
                }
            case .finish:
                guard !running.isEmpty else { return }
                let generation = running.removeFirst()
                let entry: String
                let settlement: Machine.Settlement
                switch (cancelled.contains(generation), outcome) {
                case (true, _): (entry, settlement) = ("cancelled-\(generation)", .failed(.cancelled))
                case (false, .success): (entry, settlement) = ("ok-\(generation)", .downloaded(file: "/f\(generation)"))
                case (false, .failureOfTheURL): (entry, settlement) = ("404-\(generation)", .failed(.httpStatus))
                case (false, .failureOfThePayload):
                    (entry, settlement) = ("deadline-\(generation)", .failed(.deadlineExceeded))
                }
                switch machine.finish(
                    SharedDownloadsMachineTests.url, generation: generation, entry: entry, settlement: settlement)
                {
                case .discard(let file):
                    if let file { discarded.append(file) }
                case .deliver(let deliveries):
                    for delivery in deliveries {
                        if !waiting.contains(delivery.waiter) { problems.append("delivered to \(delivery.waiter)") }
                        if delivery.fromOther != (delivery.waiter != generation) { problems.append("wrong fromOther") }
                        deliver(entry, to: delivery.waiter)
                    }
                }
            }
            // A running download nobody waits for must have been cancelled.
            if case .running(let slot)? = machine.slots[SharedDownloadsMachineTests.url], slot.waiters.isEmpty {
                problems.append("a running slot with no waiter")
            }
            if waiting.contains(where: { waiter in
                guard case .running(let slot)? = machine.slots[SharedDownloadsMachineTests.url] else { return true }
                return !slot.waiters.contains(waiter)
            }) {
                problems.append("a waiter the machine forgot")
            }
        }
    }

    static func permutations<T>(_ items: [T]) -> [[T]] {
        guard let first = items.first else { return [[]] }
        return permutations(Array(items.dropFirst())).flatMap { rest in
            (0...rest.count).map { index in
                var order = rest
                order.insert(first, at: index)
                return order
            }
        }
    }

    /// Three payloads ask for one URL, the second leaves, and the download ends, in all 120 orders
    /// and for each kind of outcome: every payload is resumed exactly once, with `cancelled` when it
    /// left first; at most one download of the URL runs; every cache file is kept or removed, once.
    @Test(arguments: Outcome.allCases)
    func everyOrderOfAskingLeavingAndFinishing(outcome: Outcome) {
        let events: [Event] = [.attend(1), .attend(2), .leave(2), .attend(3), .finish]
        for order in Self.permutations(events) {
            var world = World(outcome: outcome, waiters: 3)
            for event in order { world.apply(event) }
            // The tasks still running end too (a cancelled one with `cancelled`).
            while !world.running.isEmpty { world.apply(.finish) }
            let label = order.map(\.description).joined(separator: " ")
            #expect(world.problems.isEmpty, "\(label): \(world.problems)")
            #expect(Set(world.received.keys) == [1, 2, 3], "\(label): everyone is resumed")
            #expect(world.waiting.isEmpty, "\(label)")
            let leftFirst = order.firstIndex(of: .leave(2)) ?? 0 < order.firstIndex(of: .finish) ?? 0
            if leftFirst {
                #expect(world.received[2] == "cancelled", "\(label): the waiter that left")
            }
            #expect(machineIsSettled(world.machine), "\(label): nothing pending or running")
            let files = world.machine.files + world.discarded
            #expect(Set(files).count == files.count, "\(label): each file once")
            if outcome != .success { #expect(files.isEmpty, "\(label)") }
            for waiter: UInt64 in [1, 3] where world.received[waiter] == "cancelled" {
                Issue.record("\(label): waiter \(waiter) never left but was cancelled")
            }
        }
    }

    /// Two payloads ask and both leave while the download runs, in every order: the download is
    /// cancelled exactly when the second leaves, and its file (if any) is removed.
    @Test func everyOrderOfEveryWaiterLeaving() {
        let events: [Event] = [.attend(1), .attend(2), .leave(1), .leave(2)]
        for order in Self.permutations(events) {
            var world = World(outcome: .success, waiters: 2)
            for event in order { world.apply(event) }
            let label = order.map(\.description).joined(separator: " ")
            #expect(world.problems.isEmpty, "\(label): \(world.problems)")
            #expect(world.received == [1: "cancelled", 2: "cancelled"], "\(label)")
            #expect(world.running.allSatisfy(world.cancelled.contains), "\(label): every download cancelled")
            while !world.running.isEmpty { world.apply(.finish) }
            #expect(machineIsSettled(world.machine) && world.machine.slots.isEmpty, "\(label)")
        }
    }

    func machineIsSettled(_ machine: Machine) -> Bool {
        machine.pending.isEmpty && machine.cancelledEarly.isEmpty
            && !machine.slots.values.contains {
                if case .running = $0 { true } else { false }
            }
    }
}
