/// The descriptor budget in richpush's terms: a download's share in the shaping relay is the
/// relay's own (``NetworkRelay/descriptorsPerTransfer``), and advice names the command's setting.
extension DescriptorBudget.Need {
    /// What a run needs when its downloads are `relayed` through a network profile's relay or not.
    public init(concurrency: Int, relayed: Bool, storing: Bool) {
        self.init(
            concurrency: concurrency, relayShare: relayed ? NetworkRelay.descriptorsPerTransfer : 0, storing: storing)
    }
}

extension DescriptorBudget {
    /// ``shortfall(_:option:)`` naming `setting` as the command line spells it.
    public func shortfall(_ need: Need, setting: Setting) -> String? {
        shortfall(need, option: setting)
    }
}
