import Foundation

/// The sanitizer the suite runs under, as `scripts/test --asan` announces it (`thread` by hand: see README).
///
/// Sanitized code runs several times slower and uses more memory, so tests with time or memory
/// bounds skip (`.disabled(if: Sanitizer.isActive)`) or stretch their bounds with ``scaled(_:)``.
public enum Sanitizer: String, Sendable {
    case address
    case thread

    /// The sanitizer named by `RICHPUSH_SANITIZER`, if any.
    public static let current: Sanitizer? = ProcessInfo.processInfo.environment["RICHPUSH_SANITIZER"].flatMap {
        Sanitizer(rawValue: $0)
    }

    /// Whether the suite runs under a sanitizer.
    public static var isActive: Bool { current != nil }

    /// A time bound stretched (three times) under a sanitizer: unchanged without one.
    ///
    /// Three times, not more: the sample `slow-server.json` must still run out of a stretched
    /// 10 s budget against its 40 s delay.
    public static func scaled(_ bound: Duration) -> Duration {
        current == nil ? bound : bound * 3
    }
}
