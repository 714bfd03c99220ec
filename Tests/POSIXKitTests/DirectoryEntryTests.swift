import Foundation
import POSIXKit
import TestSupport
import Testing

@testable import POSIXKit

@Suite struct DirectoryEntryTests {
    /// Names of every length from 1 to 255 bytes (the longest a name may be), some of them not
    /// ASCII, read back exactly from each record as `readdir` returns it.
    @Test func readsEveryEntrysNameFromItsOwnRecord() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var written: Set<[UInt8]> = []
        for length in 1...255 {
            var name = Array(repeating: UInt8(ascii: "a") + UInt8(length % 26), count: length)
            if length % 7 == 0 && length >= 2 { name[0] = 0xC3; name[1] = 0xA9 }  // é
            written.insert(name)
            let path = Array(folder.utf8) + [UInt8(ascii: "/")] + name + [0]
            let descriptor = path.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o600) }
            }
            #expect(descriptor >= 0)
            close(descriptor)
        }
        let stream = try #require(opendir(folder))
        defer { closedir(stream) }
        var read: Set<[UInt8]> = []
        while let entry = readdir(stream) {
            let name = SystemCall.entryName(entry)
            if name != [UInt8(ascii: ".")] && name != [UInt8(ascii: "."), UInt8(ascii: ".")] { read.insert(name) }
        }
        #expect(read == written)
    }

    /// The descriptor count, which reads `/proc/self/fd` this way, sees a descriptor opened and closed.
    @Test func theOpenCountFollowsADescriptor() throws {
        let before = DescriptorBudget.openCount()
        let descriptor = open("/dev/null", O_RDONLY)
        #expect(descriptor >= 0)
        let during = DescriptorBudget.openCount()
        close(descriptor)
        #expect(during >= 1)
        #expect(before >= 0)
        // Other tests open and close descriptors at the same time: only the direction is certain
        // when nothing else runs, so the count is checked against a range around it.
        #expect(abs(during - before - 1) < 64)
    }
}
