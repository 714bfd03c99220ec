import RichPush

/// The files a command writes, opened before it does any work: the one output policy.
///
/// Every output path is opened (``OutputFile/open(_:)``) when the plan is made, so a report into a
/// missing folder stops the command with exit 74 before a single download; at most one output may
/// be stdout (`-`, `/dev/stdout`), a usage error otherwise. Nothing reaches a destination before
/// ``commit(_:_:durable:)``, and every output not committed is discarded.
///
/// ```swift
/// let outputs = try OutputPlan([("--json", jsonPath), ("--html", htmlPath)])
/// defer { outputs.discard() }
/// let text = outputs.takesStandardOutput ? stderr : stdout   // the human text moves aside
/// ```
final class OutputPlan {
    private var pending: [String: PendingOutput] = [:]
    /// The option whose output is stdout, if one is.
    let standardOutputOption: String?

    /// Opens each `(option, path)` with a path; `reservedStandardOutput` names what already takes
    /// stdout (`report merge`'s JSON), so no output may.
    init(_ outputs: [(option: String, path: String?)], reservedStandardOutput: String? = nil) throws {
        let given = outputs.compactMap { output in output.path.map { (option: output.option, path: $0) } }
        let toStandardOutput = given.filter { Self.isStandardOutput($0.path) }.map(\.option)
        if let reserved = reservedStandardOutput, let option = toStandardOutput.first {
            throw UsageError("\(option) cannot go to stdout: \(reserved) takes it; give \(option) a file")
        }
        guard toStandardOutput.count <= 1 else {
            throw UsageError(
                "only one output can go to stdout, and " + toStandardOutput.joined(separator: " and ")
                    + " both ask for it: give the others a file")
        }
        standardOutputOption = toStandardOutput.first
        do {
            for output in given {
                do { pending[output.option] = try OutputFile.open(output.path) } catch {
                    throw CommandFailure(.ioError, "\(output.option): \(error.message)")
                }
            }
        } catch {
            discard()
            throw error
        }
    }

    /// Whether an output is stdout, so the command's own text must go to stderr.
    var takesStandardOutput: Bool { standardOutputOption != nil }

    /// Whether `option` was given.
    func has(_ option: String) -> Bool { pending[option] != nil }

    /// The descriptor `option`'s output is written to before its commit (an output written as the
    /// command runs, such as a log); nil when it was not given.
    func descriptor(_ option: String) -> Int32? { pending[option]?.descriptor }

    /// Writes `bytes` as `option`'s output and puts it in place; exit 74 naming the option on failure.
    func commit(_ option: String, _ bytes: [UInt8], durable: Bool = false) throws {
        guard let output = pending.removeValue(forKey: option) else { return }
        defer { output.discard() }
        try RichPushCLI.commit(bytes, to: output, option: option, durable: durable)
    }

    /// Discards every output not committed (its temporary is removed).
    func discard() {
        for output in pending.values { output.discard() }
        pending = [:]
    }

    /// `-` and the paths that lead to the process's stdout.
    static func isStandardOutput(_ path: String) -> Bool {
        ["-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"].contains(path)
    }
}
