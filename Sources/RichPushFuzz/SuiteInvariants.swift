import Foundation
import RichPush
import RichPushServices

/// The App Group suite read over arbitrary bytes as its plist.
///
/// - Reading never crashes: the suite decodes, or is refused as unusable (`suite-unreadable`).
/// - A suite that reads takes a recorded event: read again, it holds one more pending event.
enum SuiteInvariants {
    static let container = Scratch.folder + "/suite"
    static let plist = container + "/Library/Preferences/fuzz.plist"

    static func check(_ bytes: [UInt8]) {
        try? FileManager.default.createDirectory(
            atPath: container + "/Library/Preferences", withIntermediateDirectories: true)
        guard Scratch.write(bytes, to: plist) else { return }
        let suite: AppGroupSuite
        let before: SuiteSnapshot
        do {
            suite = try AppGroupSuite(container: container, suite: "fuzz")
            before = try suite.read()
        } catch {
            require(error.code == .suiteUnreadable, "a suite read failed with \(error.code): \(error.message)")
            return
        }
        let events = before.entries(.event).count
        do {
            _ = try SuiteRecorder.record([.event(name: "fuzz", properties: [])], in: suite)
        } catch {
            // Refused only when the suite's events key holds something other than an array, or the
            // suite cannot be written back as a property list.
            require(
                error.code == .suiteUnreadable || error.code == .storage,
                "recording failed with \(error.code): \(error.message)")
            return
        }
        guard let after = try? suite.read() else {
            require(false, "a suite richpush wrote cannot be read back")
            return
        }
        require(after.entries(.event).count == events + 1, "the recorded event is not in the suite")
    }
}
