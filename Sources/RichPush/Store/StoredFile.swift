/// A file written into the output folder: where it is and what it holds.
public struct StoredFile: Sendable, Codable, Equatable {
    /// The absolute path.
    public var path: String
    /// Its size in bytes.
    public var bytes: Int64
    /// SHA-256 of its content, lower-case hex.
    public var sha256: String
}
