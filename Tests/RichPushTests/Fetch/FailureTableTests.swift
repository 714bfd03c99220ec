import CurlKit
import Testing

@testable import RichPush

/// The one failure table: every transfer failure becomes one code, and each code's facts (verdict,
/// reason, whether it depends on the URL alone, how far a request got, whom to blame) are read by the
/// pipeline, shared downloads and the track client alike.
@Suite struct FailureTableTests {
    typealias Kind = FetchError.Code.Kind

    @Test func transferFailuresBecomeOneCodeEach() {
        let cases: [(TransferFailure, Kind)] = [
            (.trustStoreUnreadable(file: "ca.pem", reason: "no certificate"), .tlsFailed),
            (.tlsFailed, .tlsFailed),
            (.redirect(location: "/elsewhere"), .httpStatus),
            (.headersTooLarge, .protocolError),
            (.declaredTooLarge, .tooLarge),
            (.capExceeded, .tooLarge),
            (.outOfDescriptors, .tooManyOpenFiles),
            (.writeFailed(errno: 28), .storageFailed),
            (.malformedURL, .invalidURL),
            (.schemeRefused, .schemeNotAllowed),
        ]
        for (failure, kind) in cases { #expect(Kind(failure) == kind, "\(failure)") }
    }

    @Test func everyCodesFactsHoldTogether() {
        for kind in Kind.allCases {
            let facts = kind.facts
            // A failed download never shows the attachment; only the budget and an interruption expire.
            #expect(
                facts.verdict
                    == (kind == .deadlineExceeded || kind == .cancelled || kind == .engineStopped
                        ? .expired : .fallback),
                "\(kind)")
            // What the client is to blame for, or what a later try may escape, is not the URL's.
            if facts.blamesClient || facts.verdict == .expired { #expect(!facts.dependsOnURLAlone, "\(kind)") }
            // A request that got an answer depended on the URL; one that never left was not delivered.
            if facts.reach == .answered { #expect(facts.dependsOnURLAlone, "\(kind)") }
        }
        #expect(Kind.allCases.filter { $0.facts.blamesClient } == [.tooManyOpenFiles])
        #expect(Kind.tooLarge.facts.reason == .fileTooLarge && Kind.invalidHostMapping.facts.reason == .transferFailed)
    }

    /// The consumers read the table, not a copy of it.
    @Test func theConsumersAgreeWithTheTable() {
        for kind in Kind.allCases {
            #expect(
                SharedDownloadsMachine<Int>.dependsOnURLAlone(FetchError.Code(kind)) == kind.facts.dependsOnURLAlone,
                "\(kind)")
        }
        #expect(TrackClient.reach(of: nil) == .answered)
        #expect(TrackClient.reach(of: .dnsFailed) == .neverLeft)
        #expect(TrackClient.reach(of: .connectionReset) == .maybeDelivered)
    }
}
