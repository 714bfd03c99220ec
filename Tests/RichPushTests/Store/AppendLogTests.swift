import Foundation
import POSIXKit
import Synchronization
import TestSupport
import Testing

@testable import RichPush

/// The one append-only log under the batch journal and the analytics outbox: a torn last line is cut
/// off at open, an append is whole or cut back, readers see complete lines only.
@Suite struct AppendLogTests {
    func scratch() throws -> (folder: String, path: String) {
        let folder = try Fixtures.temporaryFolder()
        return (folder, folder + "/log.ndjson")
    }

    @Test func aTornLastLineIsCutOffWhenTheLogOpens() throws {
        let (folder, path) = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data("one\ntwo\nthr".utf8).write(to: URL(fileURLWithPath: path))
        let log = try AppendLog(path: path)
        #expect(log.length == 8)
        try log.append(Array("three\n".utf8), sync: true)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "one\ntwo\nthree\n")
        var lines: [String] = []
        try AppendLog.forEachLine(inFile: path) { number, offset, line in
            lines.append("\(number)@\(offset):" + String(decoding: line, as: UTF8.self))
        }
        #expect(lines == ["0@0:one", "1@4:two", "2@8:three"])
    }

    @Test func anAppendThatFailsPartWayIsCutBack() throws {
        let (folder, path) = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A disk that takes 3 bytes of the second append, then is full.
        let calls = Mutex(0)
        let log = try AppendLog(path: path) { descriptor, buffer in
            let call = calls.withLock { count -> Int in
                count += 1
                return count
            }
            if call == 1 { return Glibc.write(descriptor, buffer.baseAddress, buffer.count) }
            if call == 2 { return Glibc.write(descriptor, buffer.baseAddress, min(3, buffer.count)) }
            errno = ENOSPC
            return -1
        }
        try log.append(Array("kept\n".utf8), sync: false)
        do throws(AppendLog.Failure) {
            try log.append(Array("lost line\n".utf8), sync: false)
            Issue.record("the append did not fail")
        } catch {
            #expect(error.error.code == ENOSPC && error.written == 3 && error.cutBack == nil)
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "kept\n")
        #expect(log.length == 5)
    }
}
