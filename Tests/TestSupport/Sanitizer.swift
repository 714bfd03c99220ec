import Foundation

/// The sanitizer the suite runs under, as `scripts/test --asan` announces it (`thread` by hand: see README).
///
/// Sanitized code runs several times slower and uses more memory, so tests with memory bounds skip
/// (`.disabled(if: Sanitizer.isActive)`), and ``TimeScale`` stretches time bounds three times more.
package enum Sanitizer: String, Sendable {
    case address
    case thread

    /// The sanitizer named by `RICHPUSH_SANITIZER`, if any.
    package static let current: Sanitizer? = ProcessInfo.processInfo.environment["RICHPUSH_SANITIZER"].flatMap {
        Sanitizer(rawValue: $0)
    }

    /// Whether the suite runs under a sanitizer.
    package static var isActive: Bool { current != nil }
}
