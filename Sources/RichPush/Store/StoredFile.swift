/// A file written into the output folder: where it is and what it holds.
package struct StoredFile: Sendable, Codable, Equatable {
    /// The absolute path.
    package var path: String
    /// Its size in bytes.
    package var bytes: Int64
    /// SHA-256 of its content, lower-case hex.
    package var sha256: String
}
