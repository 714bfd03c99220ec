import TestSupport
import Testing

@testable import RichPush

/// The services of a network mix are the run's own over another network: nothing else changes.
@Suite struct NetworkAssignmentTests {
    @Test func eachProfilesServiceKeepsTheRunsSettingsAndSharesItsSniffCache() throws {
        let engine = try FetchEngine(loops: 1)
        defer { engine.shutdown() }
        var service = ServiceExtension(engine: engine, store: nil)
        service.emitsPayload = false
        let mix = try NetworkMix(parsing: "3g=50,wifi=50")
        let networks = NetworkAssignment(mix: mix, devices: 10, seed: 7, service: service)
        var names: Set<String> = []
        for index in 0..<10 {
            let (chosen, network) = networks.service(for: index)
            #expect(chosen.emitsPayload == false)
            #expect(chosen.sniffs === service.sniffs)
            #expect(chosen.policy.budget == service.policy.budget)
            names.insert(try #require(network))
        }
        #expect(names == ["3g", "wifi"])
    }

    @Test func aPayloadIsPreparedOncePerProfileWithThatProfilesPolicy() throws {
        let engine = try FetchEngine(loops: 1)
        defer { engine.shutdown() }
        var policy = ExtensionPolicy()
        policy.fetch.allowHTTP = true
        let service = ServiceExtension(engine: engine, store: nil, policy: policy)
        let mix = try NetworkMix(parsing: "3g=50,wifi=50")
        let networks = NetworkAssignment(mix: mix, devices: 10, seed: 7, service: service)
        let payload =
            #"{"aps":{"alert":"b","mutable-content":1},"ab":{"att":{"url":"http://a.example/x.jpg","type":"jpg"}}}"#
        let deliveries = networks.prepared(Array(payload.utf8))
        #expect(deliveries.payloads.count == 2)
        for index in 0..<10 {
            let (chosen, prepared, network, phone) = deliveries.device(index)
            #expect(phone == nil, "no audience, no phone")
            guard case .media(let plan, _) = prepared.stage, let planned = plan.items.first,
                case .fetch(let url, let fetchPolicy, _) = planned.admission
            else {
                Issue.record("the payload asks for an attachment the policy allows")
                continue
            }
            #expect(url == "http://a.example/x.jpg")
            #expect(fetchPolicy.network == chosen.policy.fetch.network)
            #expect(fetchPolicy.network.map { NetworkAssignment.key($0) } == network)
        }
    }
}
