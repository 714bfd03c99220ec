import Foundation

/// How long an asset takes over a network profile, and the largest asset that fits a budget.
///
/// The model is the relay's: the connection pays its round trips before the first body byte (TCP,
/// TLS 1.3 for HTTPS, then the request and the first byte of the answer), then the body arrives
/// at the profile's downlink rate. With loss, one retransmission timeout is added, weighted by the
/// chance that at least one of the body's segments is lost (stalls overlap, so more do not add up).
/// It is what an `expired` verdict under a profile explains itself with.
///
/// ```swift
/// let estimate = TransferEstimate(profile: .named("3g")!, bytes: 4_100_000)
/// estimate.hint(budget: .seconds(30), kind: "GIF")
/// // "at 3G this 4.1 MB GIF needs about 43 s; at most 2.8 MB fits in 30 s"
/// ```
package struct TransferEstimate: Sendable, Equatable {
    /// The segment size the relay paces and loses in.
    static let segmentBytes = 1448.0

    package var profile: NetworkProfile
    /// The body's size.
    package var bytes: Int64
    /// Whether the connection is HTTPS (one more round trip for TLS 1.3).
    package var secure: Bool

    package init(profile: NetworkProfile, bytes: Int64, secure: Bool = true) {
        self.profile = profile
        self.bytes = bytes
        self.secure = secure
    }

    /// Round trips before the first body byte: TCP, TLS (HTTPS only), request and answer.
    package var roundTrips: Int { secure ? 3 : 2 }

    /// The expected stall from loss for `bytes`: one timeout times the chance of at least one loss.
    private func lossSeconds(for bytes: Double) -> Double {
        guard profile.loss > 0, bytes > 0 else { return 0 }
        let segments = (bytes / Self.segmentBytes).rounded(.up)
        return (1 - pow(1 - profile.loss, segments)) * profile.retransmissionTimeout.seconds
    }

    private var setupSeconds: Double { Double(roundTrips) * profile.roundTrip.seconds }
    private var bytesPerSecond: Double { Double(profile.downBitsPerSecond) / 8 }

    /// The time the download needs under the profile.
    package var duration: Duration {
        let body = Double(bytes)
        return .seconds(setupSeconds + body / bytesPerSecond + lossSeconds(for: body))
    }

    /// The largest body that arrives within `budget` under the profile (0 when the round trips alone take longer).
    package func largestFitting(_ budget: Duration) -> Int64 {
        // The loss term grows with size; assume the worst (one full timeout), so the answer is safe.
        let stall = profile.loss > 0 ? profile.retransmissionTimeout.seconds : 0
        let seconds = budget.seconds - setupSeconds - stall
        guard seconds > 0 else { return 0 }
        return Int64((seconds * bytesPerSecond).rounded(.down))
    }

    /// The hint an expired verdict gives: "at 3G this 4.1 MB GIF needs about 43 s; at most 2.8 MB fits in 30 s".
    ///
    /// `kind` names the asset ("GIF", "JPEG"); nil says "asset".
    package func hint(budget: Duration, kind: String? = nil) -> String {
        let subject = "\(Self.size(bytes, roundingDown: false)) \(kind ?? "asset")"
        let needs = "at \(profile.title) this \(subject) needs about \(Self.time(duration))"
        let fits = largestFitting(budget)
        guard fits > 0 else {
            return needs + "; its round trips alone take about \(Self.time(.seconds(setupSeconds))), "
                + "so nothing fits in \(Self.time(budget))"
        }
        return needs + "; at most \(Self.size(fits, roundingDown: true)) fits in \(Self.time(budget))"
    }

    /// The hint when the asset's size is unknown (no Content-Length): only the largest size that fits.
    ///
    /// "at 3G at most 2.8 MB fits in 30 s (the server declared no size)".
    package static func hint(profile: NetworkProfile, budget: Duration, secure: Bool = true) -> String {
        let estimate = TransferEstimate(profile: profile, bytes: 0, secure: secure)
        let fits = estimate.largestFitting(budget)
        guard fits > 0 else {
            return "at \(profile.title) the round trips alone take about \(time(.seconds(estimate.setupSeconds))), "
                + "so nothing fits in \(time(budget))"
        }
        return "at \(profile.title) at most \(size(fits, roundingDown: true)) fits in \(time(budget)) "
            + "(the server declared no size)"
    }

    /// Sizes as people read them: 4.1 MB, 350 KB, 900 bytes (decimal units).
    static func size(_ bytes: Int64, roundingDown: Bool) -> String {
        let value = Double(bytes)
        func rounded(_ number: Double, _ places: Double) -> Double {
            let scale = pow(10, places)
            return (roundingDown ? (number * scale).rounded(.down) : (number * scale).rounded()) / scale
        }
        if value >= 1e6 { return String(format: "%.1f MB", rounded(value / 1e6, 1)) }
        if value >= 1e3 { return String(format: "%.0f KB", rounded(value / 1e3, 0)) }
        return "\(bytes) bytes"
    }

    /// Times as people read them: 43 s, 2.5 s, 350 ms.
    static func time(_ duration: Duration) -> String {
        let seconds = duration.seconds
        if seconds >= 10 { return String(format: "%.0f s", seconds) }
        if seconds >= 1 { return String(format: "%.1f s", seconds) }
        return String(format: "%.0f ms", seconds * 1000)
    }
}

extension Duration {
    /// The duration in seconds, as a Double.
    fileprivate var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
