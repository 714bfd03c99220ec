import Foundation
import RichPush

/// Checks a bench's target before the burst, so a mistake costs one download instead of thousands
/// of devices failing the same way.
package enum BenchPreflight {
    /// The URL with `https://` in front when `url` has no scheme (`cdn.example.com/hero.jpg`), else nil.
    package static func correctedURL(_ url: String) -> String? {
        let trimmed = url.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, !trimmed.contains("://") else { return nil }
        let rest = trimmed.hasPrefix("//") ? String(trimmed.dropFirst(2)) : trimmed
        guard let host = URLComponents(string: "https://" + rest)?.host, !host.isEmpty else { return nil }
        return "https://" + rest
    }

    /// Why a trial download stops the bench: what failed and what to do.
    package struct Problem: Error, Sendable, CustomStringConvertible {
        package var reason: ReasonCode
        package var message: String
        package var description: String { message }
    }

    /// The failures every device would meet the same way: the target is unusable, not slow.
    static let stopping: Set<ReasonCode> = [
        .tlsFailed, .dnsFailed, .connectFailed, .connectTimeout, .invalidURL, .atsBlocked, .schemeNotAllowed,
    ]

    /// Runs `payload` once through `service` (which should keep nothing) and returns the problem when
    /// the target cannot be reached or trusted; slow responses, HTTP errors and bad content are what a
    /// bench measures, so they pass.
    package static func trial(service: ServiceExtension, payload: [UInt8], url: String) async -> Problem? {
        let outcome = await service.process(payload).outcome
        guard stopping.contains(outcome.reason) else { return nil }
        var message = "a trial download of \(url.escapingControlCharacters) failed before the burst "
        message += "[\(outcome.reason.rawValue)]: \(outcome.message)"
        let trustProblems: [TLSProblem?] = [nil, .unknownIssuer, .selfSigned]
        if outcome.reason == .tlsFailed, trustProblems.contains(outcome.tlsProblem) {
            message +=
                "\nThe server's certificate is not trusted: pass \(Setting.caFile) FILE (the server's CA) if it comes from "
                + "your own CA, or check the host name in the URL."
        } else if outcome.reason == .tlsFailed {
            // The name, the dates, the chain or the protocol: trusting another CA would not help.
            message += "\nNo device was started: " + (outcome.hint ?? "fix the server's TLS and run again.")
        } else {
            message += "\nNo device was started: fix the target (or \(Setting.connectTo)) and run again."
        }
        return Problem(reason: outcome.reason, message: message)
    }
}
