import Foundation

extension NetworkProfile {
    /// How a network profile is written, for usage errors and help.
    public static let grammar = """
        PROFILE is a built-in name (\(builtIn.map(\.name).joined(separator: ", "))) or custom settings:
          down=RATE[,up=RATE][,rtt=TIME][,jitter=TIME][,loss=PERCENT]
          RATE: a number with bit, kbit, mbit or gbit (per second), for example 780kbit or 2mbit
          TIME: a number with ms or s, for example 150ms; rtt is the round trip, split evenly
          PERCENT: a number with %, below 100, for example 1%
          up defaults to down; rtt, jitter and loss default to 0.
          Example: down=2mbit,rtt=150ms,loss=1%,jitter=20ms
        """

    /// A profile by name (`3g`, `lte`, `wifi`, ...) or in the grammar of `--network`
    /// (`down=2mbit,rtt=150ms,loss=1%,jitter=20ms`); anything else is `invalid-value`, saying why.
    public static func parse(_ text: String) throws(ConfigurationError) -> NetworkProfile {
        do { return try NetworkProfile(parsing: text) } catch { throw ConfigurationError(.invalidValue, error.message) }
    }

    /// Parses a built-in name or custom settings (see ``grammar``).
    ///
    /// - Throws: ``NetworkError`` with code `invalid-network-profile` and a message that names the
    ///   offending part and ends with the grammar.
    package init(parsing text: String) throws(NetworkError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let profile = Self.named(trimmed) {
            self = profile
            return
        }
        guard trimmed.contains("=") else {
            throw Self.invalid("'\(text)' is not a known network profile")
        }
        var down: Int64?
        var up: Int64?
        var roundTrip: Duration?
        var jitter: Duration?
        var loss: Double?
        for setting in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = setting.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw Self.invalid("'\(setting)' is not KEY=VALUE") }
            let key = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
            let value = parts[1].trimmingCharacters(in: .whitespaces).lowercased()
            switch key {
            case "down":
                guard down == nil else { throw Self.invalid("down is given twice") }
                down = try Self.rate(value, key: key)
            case "up":
                guard up == nil else { throw Self.invalid("up is given twice") }
                up = try Self.rate(value, key: key)
            case "rtt":
                guard roundTrip == nil else { throw Self.invalid("rtt is given twice") }
                roundTrip = try Self.time(value, key: key, limit: 60)
            case "jitter":
                guard jitter == nil else { throw Self.invalid("jitter is given twice") }
                jitter = try Self.time(value, key: key, limit: 10)
            case "loss":
                guard loss == nil else { throw Self.invalid("loss is given twice") }
                loss = try Self.percent(value)
            default:
                throw Self.invalid("unknown setting '\(key)' (expected down, up, rtt, jitter or loss)")
            }
        }
        guard let down else { throw Self.invalid("'\(text)' has no down=RATE") }
        let halfTrip = (roundTrip ?? .zero) / 2
        self.init(
            name: trimmed, title: "custom", downBitsPerSecond: down, upBitsPerSecond: up ?? down,
            downDelay: halfTrip, upDelay: halfTrip, jitter: jitter ?? .zero, loss: loss ?? 0)
    }

    private static func invalid(_ reason: String) -> NetworkError {
        NetworkError(.invalidProfile, "invalid network profile: \(reason).\n\(grammar)")
    }

    /// A plain decimal number (digits with at most one point), or nil.
    private static func decimal(_ text: Substring) -> Double? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            text.filter({ $0 == "." }).count <= 1, let number = Double(text), number.isFinite
        else { return nil }
        return number
    }

    private static func rate(_ value: String, key: String) throws(NetworkError) -> Int64 {
        let units: [(String, Double)] = [("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1)]
        for (suffix, scale) in units where value.hasSuffix(suffix) {
            guard let number = decimal(value.dropLast(suffix.count)) else { break }
            let bits = number * scale
            guard bits >= 1_000, bits <= 100e9 else {
                throw invalid("\(key)=\(value) is outside 1kbit to 100gbit")
            }
            return Int64(bits)
        }
        throw invalid("\(key)=\(value) is not a RATE")
    }

    private static func time(_ value: String, key: String, limit seconds: Double) throws(NetworkError) -> Duration {
        let units: [(String, Double)] = [("ms", 1e-3), ("s", 1)]
        for (suffix, scale) in units where value.hasSuffix(suffix) {
            guard let number = decimal(value.dropLast(suffix.count)) else { break }
            let total = number * scale
            guard total <= seconds else { throw invalid("\(key)=\(value) is over \(Int(seconds)) s") }
            return .microseconds(Int64((total * 1e6).rounded()))
        }
        throw invalid("\(key)=\(value) is not a TIME")
    }

    private static func percent(_ value: String) throws(NetworkError) -> Double {
        guard value.hasSuffix("%"), let number = decimal(value.dropLast()) else {
            throw invalid("loss=\(value) is not a PERCENT")
        }
        guard number < 100 else { throw invalid("loss=\(value) must be below 100%") }
        return number / 100
    }
}
