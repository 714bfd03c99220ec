import CurlKit
import Testing

/// The loop group's lifecycle, without a network: libcurl's own answers for what cannot start.
@Suite struct CurlLoopGroupTests {
    @Test func initializesLibcurlOnce() {
        #expect(CurlRuntime.ensureInitialized())
        #expect(CurlRuntime.ensureInitialized())
        #expect(CurlRuntime.version.hasPrefix("libcurl/"))
    }

    @Test func startsTheRequestedNumberOfLoops() throws {
        let group = try #require(CurlLoopGroup(loops: 3))
        defer { group.stop() }
        #expect(group.loopCount == 3)
        #expect(group.inFlight == 0)
    }

    @Test func stopIsIdempotent() throws {
        let group = try #require(CurlLoopGroup(loops: 2))
        group.stop()
        group.stop()
    }

    @Test func reportsAnUnsupportedSchemeWithCurlsCode() async throws {
        let group = try #require(CurlLoopGroup(loops: 1))
        defer { group.stop() }
        let spec = TransferSpec(url: "gopher://127.0.0.1/x", deadline: .now + .seconds(5))
        let outcome = await group.transfer(spec, writingTo: -1)
        #expect(outcome.curlCode == 1)  // CURLE_UNSUPPORTED_PROTOCOL
        #expect(group.inFlight == 0)
    }

    @Test func failsATransferWhoseDeadlineHasPassed() async throws {
        let group = try #require(CurlLoopGroup(loops: 1))
        defer { group.stop() }
        let spec = TransferSpec(url: "https://127.0.0.1:1/x", deadline: .now - .seconds(1))
        let outcome = await group.transfer(spec, writingTo: -1)
        #expect(outcome.curlCode == 28)  // CURLE_OPERATION_TIMEDOUT
        #expect(outcome.timeoutMilliseconds == 0)
    }

    @Test func completesSubmissionsAfterStopAtOnce() async throws {
        let group = try #require(CurlLoopGroup(loops: 1))
        group.stop()
        let spec = TransferSpec(url: "https://127.0.0.1:1/x", deadline: .now + .seconds(5))
        let outcome = await group.transfer(spec, writingTo: -1)
        #expect(outcome.curlCode == 42)  // CURLE_ABORTED_BY_CALLBACK: the engine has stopped
    }
}
