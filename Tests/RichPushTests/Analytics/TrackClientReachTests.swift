import CurlKit
import Testing

@testable import RichPush

/// Which transport failures mean the `/users/track` request surely never left (its items are sent
/// again without a warning) and which may have reached the endpoint (reported as maybe sent twice).
@Suite struct TrackClientReachTests {
    @Test(
        arguments: [
            (nil, TrackClient.Reach.answered),
            (TransferFailure.httpStatus, .answered),
            (.redirect(location: "https://rest.example.com/"), .answered),
            (.dnsFailed, .neverLeft),
            (.connectFailed, .neverLeft),
            (.connectTimeout, .neverLeft),
            (.tlsFailed, .neverLeft),
            (.schemeRefused, .neverLeft),
            (.malformedURL, .neverLeft),
            (.trustStoreUnreadable(file: "ca.pem", reason: "empty"), .neverLeft),
            (.outOfDescriptors, .neverLeft),
            (.cancelled, .maybeDelivered),
            (.engineStopped, .maybeDelivered),
            (.deadlineExceeded, .maybeDelivered),
            (.stalled, .maybeDelivered),
            (.redirectRefused(target: "file:///etc/passwd"), .maybeDelivered),
            (.tooManyRedirects, .maybeDelivered),
            (.declaredTooLarge, .maybeDelivered),
            (.capExceeded, .maybeDelivered),
            (.writeFailed(errno: 28), .maybeDelivered),
            (.truncated, .maybeDelivered),
            (.connectionReset, .maybeDelivered),
            (.protocolError, .maybeDelivered),
            (.other, .maybeDelivered),
        ] as [(TransferFailure?, TrackClient.Reach)])
    func eachFailureSaysHowFarTheRequestGot(failure: TransferFailure?, reach: TrackClient.Reach) {
        #expect(TrackClient.reach(of: failure) == reach)
    }
}
