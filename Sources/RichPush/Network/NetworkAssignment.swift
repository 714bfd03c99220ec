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
public struct NetworkAssignment: Sendable {
    /// The services, one per profile, in the mix's order.
    private let services: [ServiceExtension]
    /// The index into `services` of each device; empty when every device has the first.
    private let indices: [UInt8]

    /// Every device over the network of `service`'s policy (loopback when it has none).
    public init(service: ServiceExtension) {
        services = [service]
        indices = []
    }

    /// The devices `0..<devices` over the profiles of `mix`, drawn with `seed`.
    public init(mix: NetworkMix, devices: Int, seed: UInt64, service: ServiceExtension) {
        services = mix.entries.map { entry in
            var policy = service.policy
            policy.fetch.network = entry.profile
            return ServiceExtension(
                engine: service.engine, sniffer: service.sniffer, store: service.store, policy: policy,
                sharedDownloads: service.sharedDownloads, tracker: service.tracker)
        }
        indices = mix.entryIndices(devices: devices, seed: seed)
    }

    /// The service device `index` runs, and the name of its profile (nil over loopback).
    public func service(for index: Int) -> (service: ServiceExtension, network: String?) {
        let chosen = indices.indices.contains(index) ? services[Int(indices[index])] : services[0]
        return (chosen, chosen.policy.fetch.network.map { Self.key($0) })
    }

    /// The key a profile's rows have in reports: its name in lower case (`3g`, `very-bad`).
    public static func key(_ profile: NetworkProfile) -> String { profile.name.lowercased() }
}
