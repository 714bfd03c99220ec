import RichPush
import Testing

/// The "why it expired" hint: time needed under a profile and the largest size that fits.
@Suite struct TransferEstimateTests {
    @Test func estimatesA3GDownloadFromRoundTripsAndRate() throws {
        let threeG = try #require(NetworkProfile.named("3g"))
        let estimate = TransferEstimate(profile: threeG, bytes: 4_100_000)
        // 3 round trips of 200 ms, then 4.1 MB at 780 kbit/s (97.5 kB/s): 0.6 + 42.05 s.
        let seconds = Double(estimate.duration.components.seconds)
        #expect(seconds >= 42 && seconds < 43)
        // (30 s - 0.6 s) x 97,500 B/s = 2,866,500 bytes.
        #expect(estimate.largestFitting(.seconds(30)) == 2_866_500)
        #expect(
            estimate.hint(budget: .seconds(30), kind: "GIF")
                == "at 3G this 4.1 MB GIF needs about 43 s; at most 2.8 MB fits in 30 s")
    }

    @Test func plainHTTPSavesTheTLSRoundTrip() throws {
        let profile = try NetworkProfile(parsing: "down=8mbit,rtt=1s")
        let secure = TransferEstimate(profile: profile, bytes: 1_000_000)
        let plain = TransferEstimate(profile: profile, bytes: 1_000_000, secure: false)
        #expect(secure.duration == .seconds(4))
        #expect(plain.duration == .seconds(3))
    }

    @Test func saysNothingFitsWhenTheRoundTripsAloneTakeTheBudget() throws {
        let edge = try #require(NetworkProfile.named("edge"))
        let estimate = TransferEstimate(profile: edge, bytes: 350_000)
        #expect(estimate.largestFitting(.seconds(2)) == 0)
        let hint = estimate.hint(budget: .seconds(2), kind: "JPEG")
        #expect(hint.hasPrefix("at Edge this 350 KB JPEG needs about 14 s"), "\(hint)")
        #expect(hint.hasSuffix("its round trips alone take about 2.5 s, so nothing fits in 2.0 s"), "\(hint)")
    }

    @Test func lossAddsAtMostOneTimeoutAndTheFittingSizeStaysSafe() throws {
        let lossy = try NetworkProfile(parsing: "down=8mbit,rtt=100ms,loss=10%")
        let clean = try NetworkProfile(parsing: "down=8mbit,rtt=100ms")
        let big = TransferEstimate(profile: lossy, bytes: 10_000_000).duration
        let bigClean = TransferEstimate(profile: clean, bytes: 10_000_000).duration
        // Thousands of segments: a loss is certain, and costs one 200 ms timeout.
        #expect(big - bigClean > .milliseconds(199) && big - bigClean < .milliseconds(201))
        let fits = TransferEstimate(profile: lossy, bytes: 1).largestFitting(.seconds(5))
        #expect(TransferEstimate(profile: lossy, bytes: fits).duration <= .seconds(5))
    }
}
