/// How large a property list richpush decodes: its size in bytes, and its objects and its strings and
/// data once expanded.
///
/// A binary property list may reference one object from many places; Foundation's reader builds a
/// separate copy for every reference, so 40 arrays that each reference the next one twice become 2^40
/// objects from 240 bytes, and one 100 KB string referenced 90,000 times from a 460 KB file becomes
/// 9 GB of strings. The object and expanded-byte limits therefore count a shared object once per
/// reference.
package struct PropertyListLimits: Sendable, Equatable {
    /// The largest file read, in bytes.
    package var maximumBytes: Int
    /// The most objects (each dictionary key and value, each array element) the decoded value may hold.
    package var maximumObjects: Int
    /// The most bytes of strings and data (dictionary keys included) the decoded value may hold.
    ///
    /// Each string or data object counts its bytes as the file stores them (data and ASCII strings one
    /// byte per byte, UTF-16 strings two bytes per unit) once per reference. That is what Foundation
    /// allocates for it: measured, 1,300 references to one 100 KB string, ASCII or UTF-16, took
    /// `PropertyListSerialization` 146 MB at peak. A Swift `String` made from a UTF-16 one holds at
    /// most 1.5 times as many bytes (3 bytes of UTF-8 for 2 of UTF-16). Counting what the file stores
    /// needs only each object's header, never its characters.
    ///
    /// An XML plist has no shared references: its strings and data hold at most as many bytes as the
    /// file (entities and base64 only shrink, and Foundation refuses a DTD that could define more), so
    /// ``maximumBytes`` bounds them, and this limit is checked for binary plists only. Every preset
    /// below allows at least its ``maximumBytes``.
    package var maximumExpandedBytes: Int
    /// What kind of file these limits are for, as messages name it: "an Info.plist".
    package var kind: String

    package init(maximumBytes: Int, maximumObjects: Int, maximumExpandedBytes: Int, kind: String) {
        self.maximumBytes = maximumBytes
        self.maximumObjects = maximumObjects
        self.maximumExpandedBytes = maximumExpandedBytes
        self.kind = kind
    }

    /// How deep arrays and dictionaries may nest in a binary property list (Foundation's own limit
    /// for XML is 512; real Info.plists and suites nest fewer than ten levels).
    package static let maximumDepth = 256

    /// An app's or an extension's Info.plist: 1 MiB, 100,000 objects, 4 MiB of strings and data.
    ///
    /// Xcode's Info.plist files are a few kilobytes and a few hundred objects (the sample service
    /// extension's: 807 bytes, 17 objects); the limits leave a margin of two orders of magnitude. A
    /// binary Info.plist shares each repeated string (a key such as `NSExceptionAllowsInsecureHTTPLoads`
    /// in every ATS exception domain), so its strings expand past its size, but only by the shared
    /// ones: 4 MiB holds a full 1 MiB file plus 50,000 shared keys of 60 bytes.
    package static let infoPlist = PropertyListLimits(
        maximumBytes: 1 << 20, maximumObjects: 100_000, maximumExpandedBytes: 4 << 20, kind: "an Info.plist")

    /// An App Group `UserDefaults` suite: 64 MiB, 500,000 objects, 128 MiB of strings and data.
    ///
    /// A suite is kilobytes; 64 MiB bounds a hostile file. A pending event is a dictionary of a dozen
    /// objects or fewer, so 500,000 objects still hold some 40,000 pending events (an extension
    /// records a few per push, and the app sends them at its next launch). Measured (debug build):
    /// suites that expand to 3,000,000 and 4,000,000 objects took `analytics show` 440 MB and 550 MB at
    /// peak; decoding a million objects under AddressSanitizer took the fuzzer past its 10 s bound.
    /// The 128 MiB of strings and data are a full 64 MiB file once plus 64 MiB of shared references:
    /// each of the 500,000 objects may be a shared string of 130 bytes (event keys are a few dozen).
    /// Measured (debug build): a suite one 64 KiB string short of it took `analytics show` 163 MB at peak.
    package static let suite = PropertyListLimits(
        maximumBytes: 64 << 20, maximumObjects: 500_000, maximumExpandedBytes: 128 << 20,
        kind: "an App Group suite")

    /// A user attribute the extension stored as a property list inside the suite (`{"email": ...}`):
    /// 64 KiB, 64 objects, 64 KiB of strings and data.
    ///
    /// An attribute is one key and one short value, so sharing gains it nothing: its strings may hold
    /// no more than its size. A suite may reference one stored attribute many times, and each copy
    /// is decoded; this way all of them together hold no more than the suite's own data, which
    /// ``suite`` bounds.
    package static let userAttribute = PropertyListLimits(
        maximumBytes: 64 << 10, maximumObjects: 64, maximumExpandedBytes: 64 << 10, kind: "a stored user attribute")
}
