import CCurlShim
import Foundation
import Testing

@testable import CurlKit

/// The epoll loop of the curl shim when its epoll descriptor breaks: an error, not a spin.
@Suite struct LoopStepTests {
    @Test func aBrokenEpollDescriptorIsAnErrorAndWaitsInsteadOfSpinning() throws {
        #expect(CurlRuntime.ensureInitialized())
        let multi = try #require(curl_multi_init())
        defer { curl_multi_cleanup(multi) }
        let loop = try #require(rp_loop_create(multi))
        defer { rp_loop_destroy(loop) }
        #expect(rp_loop_step(loop, 0) == 0, "a healthy loop with nothing to do")
        // Replace the epoll descriptor with /dev/null (not closed: its number stays the loop's, so
        // destroying the loop closes nothing another test opened): epoll_wait now fails with EINVAL.
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        #expect(null >= 0)
        #expect(dup2(null, rp_loop_epoll_descriptor(loop)) >= 0)
        close(null)
        let started = ContinuousClock.now
        for _ in 0..<5 {
            #expect(rp_loop_step(loop, 0) == -1)
            #expect(errno == EINVAL)
        }
        // Five steps asked not to wait, yet each paused: a broken loop never spins a core.
        #expect(ContinuousClock.now - started >= .milliseconds(45))
    }
}
