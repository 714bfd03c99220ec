/// Why a run could not be set up from its configuration: what was wrong, what to do, and the exit code.
///
/// The library's configurations and sessions throw it before any work starts; the command line prints
/// the message and exits with ``code``. A usage mistake (``usage(_:)``) also points to the command's help.
///
/// ```swift
/// throw SetupError.usage("give --payload or --url, not both")
/// ```
public struct SetupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The exit code from the one table.
    public var code: ExitCode
    /// What was wrong and what to do.
    public var message: String
    /// Whether the command line itself was wrong, so its help is worth pointing to.
    public var pointsToHelp: Bool

    public init(_ code: ExitCode, _ message: String, pointsToHelp: Bool = false) {
        self.code = code
        self.message = message
        self.pointsToHelp = pointsToHelp
    }

    /// A mistake in the command line: exit 64, with a pointer to the command's help.
    public static func usage(_ message: String) -> SetupError { SetupError(.usage, message, pointsToHelp: true) }

    public var description: String { message }
}
