import Foundation

/// The Braze REST API key, read in one place for every command that needs it (`--track-endpoint`,
/// `analytics flush`, `serve --api-key-file`): from the file `--api-key-file` names, else from
/// `BRAZE_REST_API_KEY`; never from the command line, and never in a message.
package enum APIKey {
    /// The key in `file`: its text without the whitespace around it (the final newline an editor
    /// adds). A file that cannot be read as UTF-8, or that holds nothing else, is `unusable-input`.
    package static func read(file: String) throws(ConfigurationError) -> String {
        guard let data = FileManager.default.contents(atPath: file),
            let key = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
            !key.isEmpty
        else {
            throw ConfigurationError(.unusableInput, "\(file): no readable file with a key there", setting: .apiKeyFile)
        }
        return key
    }

    /// The key of `file`, or else of `BRAZE_REST_API_KEY` in `environment`; neither is
    /// `invalid-combination`.
    package static func resolve(
        file: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> String {
        if let file { return try read(file: file) }
        if let text = environment["BRAZE_REST_API_KEY"], !text.isEmpty { return text }
        throw ConfigurationError(
            .invalidCombination, "no REST API key: give \(Setting.apiKeyFile) FILE or set BRAZE_REST_API_KEY")
    }
}
