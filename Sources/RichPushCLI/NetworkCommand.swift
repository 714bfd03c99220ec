import Foundation
import RichPush

/// `richpush network list`: the built-in network profiles and how to write a custom one.
enum NetworkCommand {
    // The options of this command, each declared once and read through its key.
    static let json: Key<Bool> = .flag(Option(.json, nil, "One JSON object per profile and line instead."))

    static let command = Command(
        name: "network", synopsis: "network list", summary: "Show the network profiles downloads can be shaped with.",
        about: """
            Show the network profiles downloads can be shaped with (--network PROFILE).

            Usage: richpush network list [--json]
            """,
        subcommands: [list])

    static let list = Command(
        name: "list", synopsis: "list", summary: "The built-in profiles, and how to write a custom one.",
        about: """
            Show the built-in network profiles.

            Usage: richpush network list [--json]

            Prints the built-in profiles as a table: rate down and up, round trip (the sum of both
            one-way delays), jitter and loss. The built-ins follow the presets of Apple's Network Link
            Conditioner.

            \(NetworkProfile.grammar)
            """,
        options: [OptionGroup("Options", [json])],
        run: { try run($0) })

    /// One profile as `--json` prints it.
    struct Row: Encodable {
        var name: String
        var title: String
        var downBitsPerSecond: Int64
        var upBitsPerSecond: Int64
        var downDelayMs: Double
        var upDelayMs: Double
        var rttMs: Double
        var jitterMs: Double
        var lossPercent: Double

        init(_ profile: NetworkProfile) {
            name = profile.name
            title = profile.title
            downBitsPerSecond = profile.downBitsPerSecond
            upBitsPerSecond = profile.upBitsPerSecond
            downDelayMs = milliseconds(profile.downDelay)
            upDelayMs = milliseconds(profile.upDelay)
            rttMs = milliseconds(profile.roundTrip)
            jitterMs = milliseconds(profile.jitter)
            lossPercent = profile.loss * 100
        }
    }

    static func run(_ arguments: Arguments) throws -> ExitCode {
        var arguments = arguments
        let json = try arguments.read(Self.json)
        if let extra = try arguments.positionals().first {
            throw UsageError("network list takes no argument '\(extra.escapingControlCharacters)'")
        }
        if json {
            for profile in NetworkProfile.builtIn { printLine(try JSON.string(Row(profile))) }
            return .success
        }
        var table = TextTable(
            ["NAME", "PRESET", "DOWN", "UP", "RTT", "JITTER", "LOSS"], rightAligned: [2, 3, 4, 5, 6])
        for profile in NetworkProfile.builtIn {
            table.append([
                profile.name, profile.title, rate(profile.downBitsPerSecond), rate(profile.upBitsPerSecond),
                "\(format(milliseconds(profile.roundTrip))) ms", "\(format(milliseconds(profile.jitter))) ms",
                "\(format(profile.loss * 100))%",
            ])
        }
        printLine(table.rendered)
        return .success
    }

    private static func rate(_ bits: Int64) -> String {
        if bits >= 1_000_000 { return "\(format(Double(bits) / 1e6)) Mbit/s" }
        return "\(format(Double(bits) / 1e3)) kbit/s"
    }

    private static func format(_ number: Double) -> String {
        number == number.rounded() ? String(Int64(number)) : String(format: "%.1f", number)
    }
}

private func milliseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1000 + Double(attoseconds) / 1e15
}
