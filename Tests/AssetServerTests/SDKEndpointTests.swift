import AssetServer
import Foundation
import TestSupport
import Testing

/// The SDKs' own calls answered as mock endpoints, with their faults.
@Suite struct SDKEndpointTests {
    @Test func answersTheReceiptAndTheDeliveryMetricAndTheirFaults() async throws {
        let server = try AssetServer(root: Fixtures.assets)
        defer { server.stop() }
        let port = server.httpPort
        let receipt = try await offThePool {
            try RawHTTP.get("/notifications/n-1/report_received", port: port, method: "PUT")
        }
        #expect(receipt?.status == 200)
        #expect(receipt?.text == #"{"success":true}"#)
        let metric = try await offThePool { try RawHTTP.get("/v1/track", port: port, method: "POST") }
        #expect(metric?.status == 200)
        let failing = try await offThePool { try RawHTTP.get("/v1/track?status=503", port: port, method: "POST") }
        #expect(failing?.status == 503)
        let get = try await offThePool { try RawHTTP.get("/v1/track", port: port) }
        #expect(get?.status == 405, "an SDK call is a POST or a PUT")
        let typo = try await offThePool { try RawHTTP.get("/v1/track?dela=5", port: port, method: "POST") }
        #expect(typo?.status == 200, "a parameter no fault reads is ignored, as for assets")
        // Any other path is still an asset.
        #expect(SDKEndpoint.answers("/v1/track") && !SDKEndpoint.answers("/hero.jpg"))
    }
}
