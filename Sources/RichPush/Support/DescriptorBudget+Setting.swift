import POSIXKit

/// The descriptor budget in richpush's terms: a download's share in the shaping relay is the
/// relay's own (``NetworkRelay/descriptorsPerTransfer``), and advice names the command's setting.
extension DescriptorBudget.Need {
    /// What a run needs when its downloads are `relayed` through a network profile's relay or not: then
    /// also the relay's own descriptors, with at least `profiles` routes (one per profile and host).
    package init(concurrency: Int, relayed: Bool, storing: Bool, profiles: Int = 1) {
        self.init(
            concurrency: concurrency, relayShare: relayed ? NetworkRelay.descriptorsPerTransfer : 0, storing: storing,
            fixed: relayed ? NetworkRelay.fixedDescriptors + max(1, profiles) * NetworkRelay.descriptorsPerRoute : 0)
    }
}

extension DescriptorBudget {
    /// ``shortfall(_:option:)`` naming `setting` as the command line spells it.
    package func shortfall(_ need: Need, setting: Setting) -> String? {
        shortfall(need, option: setting)
    }

    /// Refuses a run whose downloads do not fit this process's open-file limit, raised to the hard
    /// limit first: `too-few-descriptors` with the numbers and the fix. `setting` is the concurrency
    /// the advice may lower; nil for a run of one download (`process`, a single `fetch`).
    package static func require(_ need: Need, lowering setting: Setting?) throws(ConfigurationError) {
        let budget = current(raising: true)
        let shortfall: String?
        if let setting {
            shortfall = budget.shortfall(need, setting: setting)
        } else {
            shortfall = budget.shortfall(single: need)
        }
        if let shortfall { throw ConfigurationError(.tooFewDescriptors, shortfall) }
    }
}
