/// Which network each device of a run (a bench device, a batch payload) downloads over.
///
/// One profile for every device, or a ``NetworkMix`` drawn with a seed over the whole run's devices, so
/// every shard and every resumed run gives a device the same profile. ``service(for:)`` hands out the
/// run's service with that profile in its fetch policy.
///
/// ```swift
/// let networks = NetworkAssignment(mix: mix, devices: 1000, seed: 7, service: service)
/// let (device, name) = networks.service(for: 42)   // the service over device 42's profile, and its name
/// ```
package struct NetworkAssignment: Sendable {
    /// The services, one per profile, in the mix's order.
    private let services: [ServiceExtension]
    /// Each service's profile as reports name it (``key(_:)``; nil over loopback), worked out once.
    private let names: [String?]
    /// Each service's phone as reports name it (``DeviceVersion/key``), nil without an audience.
    private let phones: [String?]
    /// The index into `services` of each device; empty when every device has the first.
    private let indices: [UInt16]

    /// Every device over the network of `service`'s policy (loopback when it has none).
    package init(service: ServiceExtension) {
        services = [service]
        names = services.map { $0.policy.fetch.network.map(Self.key) }
        phones = [nil]
        indices = []
    }

    /// The devices `0..<devices` over the profiles of `mix`, drawn with `seed`.
    package init(mix: NetworkMix, devices: Int, seed: UInt64, service: ServiceExtension) {
        // The same extension over each profile: its store, engine, sniff cache and emitsPayload kept.
        services = mix.entries.map { service.over($0.profile) }
        names = services.map { $0.policy.fetch.network.map(Self.key) }
        phones = services.map { _ in nil }
        indices = mix.entryIndices(devices: devices, seed: seed).map(UInt16.init)
    }

    /// The devices `0..<devices` over the profiles of `mix` (or the service's own network), each also
    /// on a phone of `audience`: one service for each pair, both drawn with `seed`, apart.
    package init(mix: NetworkMix?, audience: AudienceMix, devices: Int, seed: UInt64, service: ServiceExtension) {
        let profiled = mix.map { $0.entries.map { service.over($0.profile) } } ?? [service]
        let phoneCount = audience.entries.count
        var services: [ServiceExtension] = []
        var phones: [String?] = []
        for base in profiled {
            for entry in audience.entries {
                services.append(base.on(entry.device))
                phones.append(entry.device.key)
            }
        }
        self.services = services
        self.phones = phones
        names = services.map { $0.policy.fetch.network.map(Self.key) }
        let networkIndices = mix?.entryIndices(devices: devices, seed: seed) ?? []
        let phoneIndices = audience.entryIndices(devices: devices, seed: seed)
        // Two bytes a device: a profile (at most 255 in a mix) times a phone (at most 12) always fits.
        indices = (0..<devices).map { device in
            let network = networkIndices.indices.contains(device) ? Int(networkIndices[device]) : 0
            return UInt16(network * phoneCount + Int(phoneIndices[device]))
        }
    }

    /// The service device `index` runs, and the name of its profile (nil over loopback).
    package func service(for index: Int) -> (service: ServiceExtension, network: String?) {
        let position = position(of: index)
        return (services[position], names[position])
    }

    /// The phone device `index` is judged on (``DeviceVersion/key``), nil without an audience.
    package func phone(for index: Int) -> String? {
        phones[position(of: index)]
    }

    /// A payload prepared once per profile (``ServiceExtension/prepare(_:)``), handed to each device
    /// with its service: what a run reads once instead of once per device.
    package struct Deliveries: Sendable {
        let assignment: NetworkAssignment
        let payloads: [ServiceExtension.PreparedPayload]

        /// Device `index`'s service, the payload prepared for it, its profile's name (nil over loopback)
        /// and its phone's (nil without an audience).
        package func device(_ index: Int) -> (ServiceExtension, ServiceExtension.PreparedPayload, String?, String?) {
            let position = assignment.position(of: index)
            return (
                assignment.services[position], payloads[position], assignment.names[position],
                assignment.phones[position]
            )
        }
    }

    /// `payload` prepared by each profile's service.
    package func prepared(_ payload: [UInt8]) -> Deliveries {
        Deliveries(assignment: self, payloads: services.map { $0.prepare(payload) })
    }

    private func position(of index: Int) -> Int {
        indices.indices.contains(index) ? Int(indices[index]) : 0
    }

    /// The key a profile's rows have in reports: its name in lower case (`3g`, `very-bad`).
    package static func key(_ profile: NetworkProfile) -> String { profile.name.lowercased() }
}
