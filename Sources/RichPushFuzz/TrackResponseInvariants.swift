import Foundation
import RichPush
import RichPushServices

/// What an endpoint sends back and what a flush keeps: the `/users/track` answer reader and the
/// outbox log reader, over any bytes.
///
/// - ``TrackResponse`` never traps; its indices are never negative and its texts and lists stay
///   within their caps.
/// - The outbox reader either reads an outbox or says the file is unusable (never another error).
///   A log and the same log cut after its last newline read alike (a torn last line is ignored), and
///   an outbox it read, saved and read again, has the same items.
enum TrackResponseInvariants {
    static func check(_ bytes: [UInt8]) {
        let response = TrackResponse(body: bytes)
        require(response.refusals.allSatisfy { $0.index >= 0 }, "a negative index")
        require(response.errors.count <= TrackResponse.maximumErrors, "\(response.errors.count) errors kept")
        require(response.errors.count <= response.errorCount, "more errors kept than there were")
        require(
            (response.errors + [response.message ?? ""] + response.refusals.map(\.reason)).allSatisfy {
                $0.count <= TrackResponse.maximumText
            }, "a text over the cap")
        checkOutbox(bytes)
    }

    static func checkOutbox(_ bytes: [UInt8]) {
        let path = Scratch.folder + "/.fuzz.richpush-outbox.json"
        let whole = read(bytes, path: path)
        if let end = bytes.lastIndex(of: 0x0a) {
            let cut = read(Array(bytes[...end]), path: path)
            require(whole == cut, "a torn last line changed what the log reads as")
        }
        guard case .some(.some(let outbox)) = whole else { return }
        do {
            try outbox.save(to: path)
            let again = try Outbox.load(from: path) ?? Outbox()
            require(again.items.map(\.id) == outbox.items.map(\.id), "saving changed the items")
            require(again.unconfirmedClaim == outbox.unconfirmedClaim, "saving changed the claim")
        } catch {
            require(false, "an outbox read from bytes could not be saved and read again: \(error)")
        }
    }

    /// The outbox, or nil when the reader called it unusable; .none when it failed otherwise (a broken invariant).
    static func read(_ bytes: [UInt8], path: String) -> Outbox?? {
        do { return .some(try Outbox.decode(bytes, path: path)) } catch {
            require(error.code == .outboxUnreadable, "the reader failed with \(error.code): \(error.message)")
            return .some(nil)
        }
    }
}
