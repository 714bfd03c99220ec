import Foundation
import POSIXKit
import TestSupport
import Testing

@testable import POSIXKit

@Suite struct SystemCallTests {
    @Test func failuresCarryTheErrnoTheOperationAndThePath() {
        #expect(throws: SystemError.self) {
            try SystemCall.retrying("open", path: "/nonexistent/x") { open("/nonexistent/x", O_RDONLY) }
        }
        do {
            _ = try SystemCall.retrying("open", path: "/nonexistent/x") { open("/nonexistent/x", O_RDONLY) }
        } catch {
            #expect(error.code == ENOENT)
            #expect(error.operation == "open")
            #expect(error.path == "/nonexistent/x")
            #expect(error.message.hasPrefix("cannot open '/nonexistent/x': No such file or directory."))
            #expect(error.message.contains("Check the path"), "the message says what to do")
        }
    }

    @Test func makesFoldersWithTheirParentsAndSaysWhichOneCannotBeMade() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try SystemCall.makeFolders(folder + "/a/b//c")
        try SystemCall.makeFolders(folder + "/a/b/c")  // already there: fine
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: folder + "/a/b/c", isDirectory: &isFolder) && isFolder.boolValue)
        _ = FileManager.default.createFile(atPath: folder + "/file", contents: Data())
        #expect(throws: SystemError(code: EEXIST, operation: "create the folder", path: folder + "/file")) {
            try SystemCall.makeFolders(folder + "/file/x")
        }
        do {
            try SystemCall.makeFolders("/proc/richpush-x", operation: "create the output folder")
            Issue.record("a folder was made in /proc")
        } catch {
            #expect(error.message.hasPrefix("cannot create the output folder '/proc/richpush-x': "), "\(error.message)")
            #expect(!error.message.contains("The operation could not be completed"))
        }
    }

    @Test func retriesEINTR() throws {
        var calls = 0
        let result = try SystemCall.retrying("test") { () -> Int32 in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == 7)
        #expect(calls == 3)
    }

    @Test func writesEverythingAndReadsItBackWithinABound() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/f"
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try SystemCall.writeAll(descriptor, bytes, path: path)
        #expect(try SystemCall.preadAll(descriptor, count: bytes.count + 10, offset: 0) == bytes, "short at the end")
        #expect(try SystemCall.preadAll(descriptor, count: 5, offset: 1000) == Array(bytes[1000..<1005]))
        lseek(descriptor, 0, SEEK_SET)
        #expect(try SystemCall.readAll(descriptor, upTo: 70_001) == Array(bytes[0..<70_001]), "stops at the bound")
        #expect(try SystemCall.readAll(descriptor, upTo: 1 << 20).count == bytes.count - 70_001, "then to the end")
    }

    @Test func aFullDeviceIsAnErrorNotALoop() {
        let descriptor = open("/dev/full", O_WRONLY | O_CLOEXEC)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        #expect(throws: SystemError(code: ENOSPC, operation: "write", path: "/dev/full")) {
            try SystemCall.writeAll(descriptor, [1, 2, 3], path: "/dev/full")
        }
    }

    @Test func refusesToOpenAFIFOWithoutBlocking() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(mkfifo(folder + "/p.json", 0o600) == 0)
        #expect(throws: SystemError.self) { try SystemCall.openRegularFile(folder + "/p.json") }
        #expect(throws: SystemError.self) { try SystemCall.openRegularFile(folder) }
        #expect(throws: SystemError.self) { try SystemCall.openRegularFile("/dev/zero") }
        _ = FileManager.default.createFile(atPath: folder + "/ok.json", contents: Data("{}".utf8))
        let descriptor = try SystemCall.openRegularFile(folder + "/ok.json")
        defer { close(descriptor) }
        #expect(fcntl(descriptor, F_GETFL) & O_NONBLOCK == 0)
        #expect(try SystemCall.readAll(descriptor, upTo: 100) == Array("{}".utf8))
    }

    @Test func readsTheUmaskFromProcStatus() {
        #expect(SystemCall.umask(inStatus: Array("Name:\tx\nUmask:\t0027\nState:\tR\n".utf8)) == 0o027)
        #expect(SystemCall.umask(inStatus: Array("Name:\tx\n".utf8)) == nil)
        #expect(SystemCall.umask(inStatus: Array("Umask:\tzz\n".utf8)) == nil)
        // Read without umask(2), which would change it for a moment under the other tests' threads.
        let mask = SystemCall.umaskFromStatus()
        #expect(mask != nil, "Linux 4.7 and later")
        #expect(SystemCall.creationMode == 0o666 & ~(mask ?? 0o022))
    }

    @Test func wrapsOpenTruncateLockAndPoll() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/f"
        let descriptor = try SystemCall.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o600)
        defer { close(descriptor) }
        #expect(throws: SystemError(code: EEXIST, operation: "create", path: path)) {
            try SystemCall.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o600, operation: "create")
        }
        try SystemCall.writeAll(descriptor, Array("hello".utf8), path: path)
        try SystemCall.truncate(descriptor, to: 2, path: path)
        #expect(try SystemCall.preadAll(descriptor, count: 10, offset: 0) == Array("he".utf8))
        #expect(try SystemCall.lockExclusively(descriptor, path: path))
        let second = try SystemCall.open(path, O_RDWR | O_CLOEXEC)
        defer { close(second) }
        #expect(try SystemCall.lockExclusively(second, path: path) == false, "held through the other open file")
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        #expect(try SystemCall.waitReadable(ends[0], milliseconds: 0) == 0, "nothing written yet")
        try SystemCall.writeAll(ends[1], [1])
        #expect(try SystemCall.waitReadable(ends[0], milliseconds: -1) & Int16(POLLIN) != 0)
        var byte: [UInt8] = [0]
        #expect(try byte.withUnsafeMutableBytes { try SystemCall.read(ends[0], into: $0) } == 1)
    }

    @Test func writeAllThroughAWriteThatIsInterruptedShortAndThenFull() {
        var calls = 0
        let write: SystemCall.Write = { _, buffer in
            calls += 1
            switch calls {
            case 1:
                errno = EINTR
                return -1
            case 2: return min(2, buffer.count)
            default:
                errno = ENOSPC
                return -1
            }
        }
        var written = 0
        let bytes: [UInt8] = [1, 2, 3, 4]
        #expect(throws: SystemError(code: ENOSPC, operation: "write", path: "j")) {
            try bytes.withUnsafeBytes { buffer in
                try SystemCall.writeAll(7, buffer, path: "j", written: &written, through: write)
            }
        }
        #expect(written == 2, "how far it got, for the caller to cut back")
        #expect(calls == 3)
    }
}
