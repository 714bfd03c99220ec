/// Why a network profile, a mix or the shaping relay could not be used: a stable code and a message.
///
/// Parsing errors are the user's to fix (the command line reports them as usage errors with the
/// grammar); `relay-failed` is the machine's (no descriptors, no thread).
package struct NetworkError: Error, Sendable, CustomStringConvertible {
    /// A stable, payload-free name for a way a profile, mix or relay can fail.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case invalidProfile = "invalid-network-profile"
            case invalidMix = "invalid-network-mix"
            case relayFailed = "relay-failed"
            case hostUnresolved = "host-unresolved"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A network profile that is neither a built-in name nor a valid custom profile.
        package static let invalidProfile = Code(.invalidProfile)
        /// A network mix that does not parse or does not sum to 100.
        package static let invalidMix = Code(.invalidMix)
        /// The relay could not start or open a route (descriptors, threads, an unresolvable host).
        package static let relayFailed = Code(.relayFailed)
        /// The relay could not resolve the upstream host of a route.
        package static let hostUnresolved = Code(.hostUnresolved)

        /// The stable kebab-case name.
        package var description: String { base.rawValue }
    }

    /// Which failure it was.
    package var code: Code
    /// What was wrong and what to do.
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
}
