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

/// When epoll refuses one of curl's sockets (out of watches), the loop polls it: the transfer
/// completes instead of waiting for its deadline.
@Suite struct UnwatchedSocketTests {
    /// A one-connection HTTP server on 127.0.0.1 (port 0): answers one request with an empty 204.
    final class OneAnswerServer: @unchecked Sendable {
        let listener: Int32
        let port: UInt16
        private let done = DispatchSemaphore(value: 0)

        struct SetupFailed: Error {}

        init() throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard listener >= 0 else { throw SetupFailed() }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0, listen(listener, 4) == 0 else {
                close(listener)
                throw SetupFailed()
            }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
            }
            self.listener = listener
            port = UInt16(bigEndian: address.sin_port)
            let done = self.done
            Thread {
                defer { done.signal() }
                var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 30_000) == 1 else { return }
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                defer { close(client) }
                var request: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !request.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
                    var readable = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
                    guard poll(&readable, 1, 30_000) == 1 else { return }
                    let got = read(client, &buffer, buffer.count)
                    guard got > 0 else { return }
                    request += buffer[0..<got]
                }
                let answer = Array("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n".utf8)
                _ = answer.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            }.start()
        }

        func stop() {
            shutdown(listener, Int32(SHUT_RDWR))
            _ = done.wait(timeout: .now() + 10)
            close(listener)
        }
    }

    @Test(arguments: [2, 1_000_000])
    func aSocketEpollRefusesIsPolledAndItsTransferCompletes(failures: Int32) throws {
        #expect(CurlRuntime.ensureInitialized())
        let server = try OneAnswerServer()
        defer { server.stop() }
        let multi = try #require(curl_multi_init())
        defer { curl_multi_cleanup(multi) }
        let loop = try #require(rp_loop_create(multi))
        defer { rp_loop_destroy(loop) }
        let easy = try #require(curl_easy_init())
        defer { curl_easy_cleanup(easy) }
        #expect(rp_easy_setopt_string(easy, CURLOPT_URL, "http://127.0.0.1:\(server.port)/") == CURLE_OK)
        #expect(rp_easy_setopt_long(easy, CURLOPT_NOBODY, 1) == CURLE_OK)
        // curl's own timeout is what an unpolled socket would wait out: the transfer must complete
        // before it (a loaded machine gets 30 s for a loopback exchange), and the loop outlasts it.
        #expect(rp_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, 30_000) == CURLE_OK)
        #expect(rp_easy_setopt_string(easy, CURLOPT_PROXY, "") == CURLE_OK)
        // The first `failures` watches fail: a few (then epoll takes the socket on a retry), or all.
        rp_loop_fail_watches(loop, failures)
        #expect(curl_multi_add_handle(multi, easy) == CURLM_OK)
        var finished: CURLcode?
        let started = ContinuousClock.now
        while finished == nil, ContinuousClock.now - started < .seconds(40) {
            _ = rp_loop_step(loop, 100)
            var done: UnsafeMutableRawPointer?
            var result = CURLE_OK
            if rp_multi_next_done(multi, &done, &result) != 0 { finished = result }
        }
        #expect(finished == CURLE_OK)
        var status = 0
        _ = rp_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        #expect(status == 204)
        #expect(rp_loop_watch_failures(loop) >= 1)
        curl_multi_remove_handle(multi, easy)
        #expect(rp_loop_unwatched_count(loop) == 0)
    }
}
