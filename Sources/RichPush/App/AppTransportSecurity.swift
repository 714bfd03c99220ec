import Foundation

/// The TLS versions App Transport Security names (`NSExceptionMinimumTLSVersion`).
package enum TLSVersion: String, Sendable, Comparable, CaseIterable, Codable {
    case tls10 = "TLSv1.0"
    case tls11 = "TLSv1.1"
    case tls12 = "TLSv1.2"
    case tls13 = "TLSv1.3"

    private var rank: Int {
        switch self {
        case .tls10: return 0
        case .tls11: return 1
        case .tls12: return 2
        case .tls13: return 3
        }
    }

    package static func < (lhs: TLSVersion, rhs: TLSVersion) -> Bool { lhs.rank < rhs.rank }
}

/// A service extension's `NSAppTransportSecurity` dictionary, and the decisions iOS makes with it.
///
/// The rules (docs/platform.md, "App Transport Security"): without an exception, only https with TLS
/// 1.2 or newer. `NSAllowsArbitraryLoads` allows http for every domain not listed in
/// `NSExceptionDomains`, but iOS 10 and later ignore it when `NSAllowsArbitraryLoadsInWebContent`,
/// `NSAllowsArbitraryLoadsForMedia` or `NSAllowsLocalNetworking` is present at all. A listed domain is
/// governed by its own entry only; names match without regard to case, and `NSIncludesSubdomains`
/// extends an entry to every subdomain (the most specific entry wins). The older
/// `NSTemporaryException…` spellings are read too. `NSAllowsLocalNetworking` allows http to
/// unqualified host names and `.local` names.
package struct AppTransportSecurity: Sendable, Equatable {
    /// One `NSExceptionDomains` entry.
    package struct ExceptionDomain: Sendable, Equatable {
        /// The domain as written, lower-cased.
        package var domain: String
        package var includesSubdomains = false
        package var allowsInsecureHTTPLoads = false
        /// `nil`: the default (TLS 1.2).
        package var minimumTLSVersion: TLSVersion?
        package var requiresForwardSecrecy = true
    }

    package var allowsArbitraryLoads = false
    /// Keys whose presence makes iOS 10+ ignore `NSAllowsArbitraryLoads`.
    package var arbitraryLoadsOverriddenBy: [String] = []
    package var allowsLocalNetworking = false
    package var exceptions: [ExceptionDomain] = []
    /// Values richpush could not use (a number where a boolean belongs, an unknown TLS version): each
    /// counts as absent, as on the device, and is reported.
    package var problems: [String] = []

    /// No exceptions: the default every app gets.
    package init() {}

    /// "Arbitrary loads": what allowing HTTP (``Setting/allowHTTP``) emulates.
    package static var arbitraryLoads: AppTransportSecurity {
        var ats = AppTransportSecurity()
        ats.allowsArbitraryLoads = true
        return ats
    }

    /// Reads the `NSAppTransportSecurity` dictionary of a plist (absent: the default).
    init(_ dictionary: [String: Any]?) {
        guard let dictionary else { return }
        func flag(_ in: [String: Any], _ keys: [String], where context: String) -> Bool {
            for key in keys where `in`[key] != nil {
                if let value = PropertyList.bool(`in`, key) { return value }
                problems.append("\(context)\(key) is not a boolean (<true/> or <false/>): iOS reads it as false")
                return false
            }
            return false
        }
        allowsArbitraryLoads = flag(dictionary, ["NSAllowsArbitraryLoads"], where: "")
        arbitraryLoadsOverriddenBy = [
            "NSAllowsArbitraryLoadsInWebContent", "NSAllowsArbitraryLoadsForMedia", "NSAllowsLocalNetworking",
        ].filter { dictionary[$0] != nil }
        allowsLocalNetworking = flag(dictionary, ["NSAllowsLocalNetworking"], where: "")
        for (domain, value) in (PropertyList.dictionary(dictionary, "NSExceptionDomains") ?? [:]).sorted(by: {
            $0.key < $1.key
        }) {
            guard let entry = value as? [String: Any] else {
                problems.append("NSExceptionDomains.\(domain) is not a dictionary: it is ignored")
                continue
            }
            let context = "NSExceptionDomains.\(domain)."
            var exception = ExceptionDomain(domain: domain.lowercased())
            exception.includesSubdomains = flag(entry, ["NSIncludesSubdomains"], where: context)
            exception.allowsInsecureHTTPLoads = flag(
                entry,
                [
                    "NSExceptionAllowsInsecureHTTPLoads", "NSTemporaryExceptionAllowsInsecureHTTPLoads",
                    "NSThirdPartyExceptionAllowsInsecureHTTPLoads",
                ], where: context)
            for key in [
                "NSExceptionMinimumTLSVersion", "NSTemporaryExceptionMinimumTLSVersion",
                "NSThirdPartyExceptionMinimumTLSVersion",
            ] where entry[key] != nil {
                if let text = PropertyList.string(entry, key), let version = TLSVersion(rawValue: text) {
                    exception.minimumTLSVersion = version
                } else {
                    problems.append(
                        "\(context)\(key) is not one of TLSv1.0, TLSv1.1, TLSv1.2, TLSv1.3: TLS 1.2 applies")
                }
                break
            }
            let forwardSecrecyKeys = [
                "NSExceptionRequiresForwardSecrecy", "NSTemporaryExceptionRequiresForwardSecrecy",
                "NSThirdPartyExceptionRequiresForwardSecrecy",
            ]
            if let key = forwardSecrecyKeys.first(where: { entry[$0] != nil }) {
                if let value = PropertyList.bool(entry, key) {
                    exception.requiresForwardSecrecy = value
                } else {
                    problems.append(
                        "\(context)\(key) is not a boolean (<true/> or <false/>): forward secrecy stays required")
                }
            }
            exceptions.append(exception)
        }
    }

    /// Whether `NSAllowsArbitraryLoads` is in force (set, and not overridden by the iOS 10 rule).
    package var arbitraryLoadsInForce: Bool { allowsArbitraryLoads && arbitraryLoadsOverriddenBy.isEmpty }

    /// The entry that governs `host`: an exact match, else the longest domain that includes subdomains.
    package func exception(for host: String) -> ExceptionDomain? {
        let host = host.lowercased()
        if let exact = exceptions.first(where: { $0.domain == host }) { return exact }
        return
            exceptions
            .filter { $0.includesSubdomains && host.hasSuffix("." + $0.domain) }
            .max { $0.domain.count < $1.domain.count }
    }

    /// What iOS decides for a load of `url`.
    package func decide(_ url: String) -> ATSDecision {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else {
            return .blocked(rule: "not an absolute URL", message: "'\(url)' is not an absolute URL", hint: nil)
        }
        let governing = exception(for: host)
        let minimum = governing?.minimumTLSVersion ?? .tls12
        let rule: String
        if let governing {
            rule =
                governing.domain == host.lowercased()
                ? "the NSExceptionDomains entry for \(governing.domain)"
                : "the NSExceptionDomains entry for \(governing.domain) (NSIncludesSubdomains)"
        } else if arbitraryLoadsInForce {
            rule = "NSAllowsArbitraryLoads"
        } else {
            rule = "the default (no exception for \(host.lowercased()))"
        }
        switch scheme {
        case "https":
            return .allowed(minimumTLS: minimum, rule: rule)
        case "http":
            if let governing {
                if governing.allowsInsecureHTTPLoads { return .allowed(minimumTLS: minimum, rule: rule) }
                return .blocked(
                    rule: rule,
                    message:
                        "\(url) is plain http and \(rule) does not set NSExceptionAllowsInsecureHTTPLoads: "
                        + "App Transport Security blocks it",
                    hint: Self.snippet(for: governing.domain, includesSubdomains: governing.includesSubdomains))
            }
            if allowsLocalNetworking && Self.isLocal(host) {
                return .allowed(minimumTLS: minimum, rule: "NSAllowsLocalNetworking (\(host) is a local name)")
            }
            if arbitraryLoadsInForce { return .allowed(minimumTLS: minimum, rule: rule) }
            var message = "blocked: \(host.lowercased()) has no ATS exception"
            let others = exceptions.filter { $0.allowsInsecureHTTPLoads }.map(\.domain)
            if !others.isEmpty {
                message += "; \(others.joined(separator: ", ")) \(others.count == 1 ? "has" : "have") one"
            }
            if allowsArbitraryLoads && !arbitraryLoadsOverriddenBy.isEmpty {
                message +=
                    "; NSAllowsArbitraryLoads is ignored because \(arbitraryLoadsOverriddenBy.joined(separator: ", ")) "
                    + "is present (iOS 10 and later)"
            }
            return .blocked(
                rule: rule, message: message + ". Serve the asset over https, or add an exception.",
                hint: Self.snippet(for: host.lowercased(), includesSubdomains: false))
        default:
            return .blocked(
                rule: "scheme", message: "\(scheme): URLs cannot be loaded by the extension: use https", hint: nil)
        }
    }

    /// Unqualified names and `.local` names, which `NSAllowsLocalNetworking` lets through.
    static func isLocal(_ host: String) -> Bool {
        let host = host.lowercased()
        return !host.contains(".") || host.hasSuffix(".local")
    }

    /// The plist snippet that would allow http to `domain`.
    static func snippet(for domain: String, includesSubdomains: Bool) -> String {
        var text =
            "add to the service extension's Info.plist, under NSAppTransportSecurity: <key>NSExceptionDomains</key>"
            + "<dict><key>\(domain)</key><dict><key>NSExceptionAllowsInsecureHTTPLoads</key><true/>"
        if includesSubdomains { text += "<key>NSIncludesSubdomains</key><true/>" }
        return text + "</dict></dict>"
    }
}

/// What App Transport Security decides for one URL.
package enum ATSDecision: Sendable, Equatable {
    /// The load may go ahead, over a TLS version at least `minimumTLS` when it is https.
    case allowed(minimumTLS: TLSVersion, rule: String)
    /// iOS refuses the load; `rule` names what decided, `hint` gives the plist change that would allow it.
    case blocked(rule: String, message: String, hint: String?)
}
