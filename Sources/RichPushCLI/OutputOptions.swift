import RichPush

/// The options of commands that keep files: the output folder and whether writes are flushed.
///
/// Output *files* (`--report`, `--junit`, `--json`, `-o`) go through ``OutputFile``: `-` is stdout,
/// a FIFO or device is written directly, a regular file is replaced atomically. ``prepare(_:)``
/// opens one before the work starts, so a missing folder stops the run before it begins.
struct OutputOptions {
    /// `--out DIR`, or the command's default.
    var folder: String?
    /// `--fsync`: each file is flushed to disk before it gets its name.
    var durable: Bool

    /// Reads the command's `--out` (`out`) and `--fsync` out of `arguments`.
    init(parsing arguments: inout Arguments, out: Key<String?>, defaultFolder: String? = nil) throws {
        folder = try arguments.read(out) ?? defaultFolder
        durable = try arguments.read(Keys.fsync)
    }

    /// Opens the output `path` (`option` names it in messages); nil when `path` is nil.
    ///
    /// A destination that cannot be written is exit 74, before any work is done.
    static func prepare(_ path: String?, option: String) throws -> PendingOutput? {
        guard let path else { return nil }
        do { return try OutputFile.open(path) } catch {
            throw CommandFailure(.ioError, "\(option): \(error.message)")
        }
    }
}
