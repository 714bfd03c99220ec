import RichPush
import Testing

/// Built-in profiles and the custom grammar, with its errors.
@Suite struct NetworkProfileTests {
    @Test func builtInProfilesFollowTheLinkConditionerPresets() throws {
        let threeG = try #require(NetworkProfile.named("3G"))
        #expect(threeG.downBitsPerSecond == 780_000)
        #expect(threeG.upBitsPerSecond == 330_000)
        #expect(threeG.roundTrip == .milliseconds(200))
        let edge = try #require(NetworkProfile.named("edge"))
        #expect(edge.downBitsPerSecond == 240_000 && edge.roundTrip == .milliseconds(840))
        let lte = try #require(NetworkProfile.named("lte"))
        #expect(lte.downBitsPerSecond == 50_000_000 && lte.roundTrip == .milliseconds(115))
        let bad = try #require(NetworkProfile.named("very-bad"))
        #expect(bad.loss == 0.10 && bad.roundTrip == .seconds(1) && bad.downBitsPerSecond == 1_000_000)
        #expect(NetworkProfile.named("Wi-Fi")?.name == "wifi")
        #expect(NetworkProfile.named("5g") == nil)
        #expect(Set(NetworkProfile.builtIn.map(\.name)).count == NetworkProfile.builtIn.count)
    }

    @Test func parsesACustomProfile() throws {
        let profile = try NetworkProfile(parsing: "down=2mbit,rtt=150ms,loss=1%,jitter=20ms")
        #expect(profile.downBitsPerSecond == 2_000_000)
        #expect(profile.upBitsPerSecond == 2_000_000, "up defaults to down")
        #expect(profile.downDelay == .microseconds(75_000) && profile.upDelay == .microseconds(75_000))
        #expect(profile.roundTrip == .milliseconds(150))
        #expect(profile.jitter == .milliseconds(20))
        #expect(profile.loss == 0.01)
        #expect(profile.title == "custom")
        let asymmetric = try NetworkProfile(parsing: "up=512kbit, down=1.5mbit, rtt=1s")
        #expect(asymmetric.upBitsPerSecond == 512_000 && asymmetric.downBitsPerSecond == 1_500_000)
        #expect(asymmetric.roundTrip == .seconds(1) && asymmetric.loss == 0)
        #expect(try NetworkProfile(parsing: "3g") == NetworkProfile.named("3g"))
    }

    @Test(arguments: [
        ("", "not a known network profile"),
        ("5g", "not a known network profile"),
        ("rtt=100ms", "has no down=RATE"),
        ("down=2mbit,down=3mbit", "down is given twice"),
        ("down=2", "is not a RATE"),
        ("down=2mbps", "is not a RATE"),
        ("down=-2mbit", "is not a RATE"),
        ("down=1e6bit", "is not a RATE"),
        ("down=10bit", "outside 1kbit to 100gbit"),
        ("down=1mbit,rtt=100", "is not a TIME"),
        ("down=1mbit,rtt=61s", "over 60 s"),
        ("down=1mbit,loss=100%", "below 100%"),
        ("down=1mbit,loss=5", "is not a PERCENT"),
        ("down=1mbit,speed=3", "unknown setting 'speed'"),
        ("down=1mbit,,rtt=1ms", "is not KEY=VALUE"),
    ])
    func rejectsMalformedProfilesWithTheGrammar(text: String, reason: String) {
        do {
            let profile = try NetworkProfile(parsing: text)
            Issue.record("'\(text)' parsed as \(profile)")
        } catch {
            #expect(error.code == .invalidProfile)
            #expect(error.message.contains(reason), "\(error.message)")
            #expect(error.message.contains("down=RATE[,up=RATE][,rtt=TIME]"), "the message shows the grammar")
        }
    }

    @Test func aLostSegmentCostsAboutOneRetransmissionTimeout() throws {
        #expect(try NetworkProfile(parsing: "down=1mbit,rtt=20ms").retransmissionTimeout == .milliseconds(200))
        #expect(try NetworkProfile(parsing: "down=1mbit,rtt=300ms").retransmissionTimeout == .milliseconds(600))
    }
}
