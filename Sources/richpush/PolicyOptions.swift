import RichPush

/// The options of every command that runs the extension: its budget, push type, size caps, and
/// the download options (``TLSOptions``).
///
/// ```swift
/// var arguments = Arguments(["--budget", "5", "--cacert", "ca.pem"])
/// let policy = try PolicyOptions(parsing: &arguments).policy   // an ExtensionPolicy
/// ```
struct PolicyOptions {
    /// The extension policy the options describe.
    var policy = ExtensionPolicy()
    /// Whether `--budget` was given (a command with another default keeps the user's).
    var budgetGiven = false

    static let help = """
          --budget SECONDS        The extension's time budget, one deadline for the run (default 30).
          --push-type TYPE        alert (4096-byte limit) or voip (5120); default alert.
          --binary-mb             Count Apple's size caps in 2^20-byte megabytes (default 10^6).
        """ + "\n" + TLSOptions.help

    /// Reads the options out of `arguments`.
    init(parsing arguments: inout Arguments) throws {
        if let seconds: Double = try arguments.number("--budget", in: 0.001...3600) {
            policy.budget = .milliseconds(Int64(seconds * 1000))
            budgetGiven = true
        }
        if let type = try arguments.value("--push-type") {
            guard let pushType = ExtensionPolicy.PushType(rawValue: type.lowercased()) else {
                throw UsageError(
                    "--push-type takes one of \(ExtensionPolicy.PushType.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            policy.pushType = pushType
        }
        policy.binaryMegabytes = arguments.flag("--binary-mb")
        policy.fetch = try TLSOptions(parsing: &arguments).policy
    }
}
