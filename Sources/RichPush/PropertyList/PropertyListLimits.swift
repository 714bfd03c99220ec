/// How large a property list richpush decodes: its size in bytes, and its objects once expanded.
///
/// A binary property list may reference one object from many places; Foundation's reader builds a
/// separate copy for every reference, so 40 arrays that each reference the next one twice become 2^40
/// objects from 240 bytes. The object limit therefore counts a shared object once per reference.
public struct PropertyListLimits: Sendable, Equatable {
    /// The largest file read, in bytes.
    public var maximumBytes: Int
    /// The most objects (each dictionary key and value, each array element) the decoded value may hold.
    public var maximumObjects: Int
    /// What kind of file these limits are for, as messages name it: "an Info.plist".
    public var kind: String

    public init(maximumBytes: Int, maximumObjects: Int, kind: String) {
        self.maximumBytes = maximumBytes
        self.maximumObjects = maximumObjects
        self.kind = kind
    }

    /// How deep arrays and dictionaries may nest in a binary property list (Foundation's own limit
    /// for XML is 512; real Info.plists and suites nest fewer than ten levels).
    public static let maximumDepth = 256

    /// An app's or an extension's Info.plist: 1 MiB and 100,000 objects.
    ///
    /// Xcode's Info.plist files are a few kilobytes and a few hundred objects (the sample service
    /// extension's: 807 bytes, 17 objects); the limits leave a margin of two orders of magnitude.
    public static let infoPlist = PropertyListLimits(
        maximumBytes: 1 << 20, maximumObjects: 100_000, kind: "an Info.plist")

    /// An App Group `UserDefaults` suite: 64 MiB and 500,000 objects.
    ///
    /// A suite is kilobytes; 64 MiB bounds a hostile file. A pending event is a dictionary of a dozen
    /// objects or fewer, so 500,000 objects still hold some 40,000 pending events (an extension
    /// records a few per push, and the app sends them at its next launch). Measured (debug build):
    /// suites that expand to 3,000,000 and 4,000,000 objects took `analytics show` 440 MB and 550 MB at
    /// peak; decoding a million objects under AddressSanitizer took the fuzzer past its 10 s bound.
    public static let suite = PropertyListLimits(
        maximumBytes: 64 << 20, maximumObjects: 500_000, kind: "an App Group suite")

    /// A user attribute the extension stored as a property list inside the suite (`{"email": ...}`).
    public static let userAttribute = PropertyListLimits(
        maximumBytes: 64 << 10, maximumObjects: 64, kind: "a stored user attribute")
}
