import Foundation

/// The sanitizer the suite runs under, as `scripts/test --asan` or `--tsan` announces it.
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

    /// A time bound stretched for the sanitizer in use: unchanged without one.
    public static func scaled(_ bound: Duration) -> Duration {
        switch current {
        case .none: return bound
        case .address: return bound * 3
        case .thread: return bound * 10
        }
    }
}
