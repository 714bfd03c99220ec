import Foundation
import POSIXKit
import TestSupport
import Testing

@Suite struct TemporaryFileTests {
    let folder: String

    init() throws { folder = try Fixtures.temporaryFolder() }

    @Test func createsExclusivelyWithARandomNameAndMode0600() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try TemporaryFile.createExclusively(in: folder, prefix: ".x-")
        let second = try TemporaryFile.createExclusively(in: folder, prefix: ".x-")
        #expect(first.path != second.path)
        #expect(first.path.hasPrefix(folder + "/.x-") && first.path.hasSuffix(".part"))
        var info = stat()
        #expect(fstat(first.descriptor, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        first.discard()
        second.discard()
        #expect(Fixtures.files(in: folder).isEmpty, "discard removes them")
    }

    @Test func commitRenamesOverARegularFileOnly() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let destination = folder + "/out.json"
        _ = FileManager.default.createFile(atPath: destination, contents: Data("old".utf8))
        let temporary = try TemporaryFile.createExclusively(in: folder)
        try SystemCall.writeAll(temporary.descriptor, Array("new".utf8))
        try temporary.commit(as: destination, durable: true)
        temporary.discard()
        #expect(FileManager.default.contents(atPath: destination) == Data("new".utf8))
        #expect(Fixtures.files(in: folder) == ["out.json"])

        // A folder, a link or a FIFO at the destination is never replaced.
        let victim = folder + "/victim"
        _ = FileManager.default.createFile(atPath: victim, contents: Data("keep".utf8))
        try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: victim)
        try FileManager.default.createDirectory(atPath: folder + "/dir", withIntermediateDirectories: false)
        #expect(mkfifo(folder + "/fifo", 0o600) == 0)
        for name in ["link", "dir", "fifo"] {
            let other = try TemporaryFile.createExclusively(in: folder)
            #expect(throws: SystemError.self) { try other.commit(as: folder + "/" + name) }
            other.discard()
        }
        #expect(FileManager.default.contents(atPath: victim) == Data("keep".utf8))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: folder + "/link") == victim)
        #expect(!Fixtures.files(in: folder).contains { $0.hasSuffix(".part") })
    }

    @Test func removeAllLiveRemovesTheTemporariesStillOpen() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let open = try TemporaryFile.createExclusively(in: folder)
        let committed = try TemporaryFile.createExclusively(in: folder)
        try committed.commit(as: folder + "/kept")
        TemporaryFile.removeAllLive(in: folder)
        #expect(!FileManager.default.fileExists(atPath: open.path))
        #expect(Fixtures.files(in: folder) == ["kept"], "a committed file is not a temporary any more")
        open.discard()
        committed.discard()
    }

    // The unnamed path (O_TMPFILE + linkat) and its fallback: both give the same files.

    @Test(arguments: [true, false])
    func createsUnnamedWhereTheFileSystemAllowsAndNamedOtherwise(unnamed: Bool) throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let temporary = try TemporaryFile.create(in: folder, prefix: ".x-", unnamed: unnamed)
        defer { temporary.discard() }
        // The test folder is on ext4 or tmpfs, which take O_TMPFILE.
        #expect(temporary.isUnnamed == unnamed)
        #expect(Fixtures.files(in: folder).count == (unnamed ? 0 : 1), "an unnamed file has no name while written")
        var info = stat()
        #expect(fstat(temporary.descriptor, &info) == 0 && info.st_mode & 0o777 == 0o600)
        try SystemCall.writeAll(temporary.descriptor, Array("body".utf8))
        // Its path opens it (the sniffer reads by path).
        let reader = try SystemCall.open(temporary.path, O_RDONLY | O_CLOEXEC)
        defer { close(reader) }
        #expect(try SystemCall.readAll(reader, upTo: 100) == Array("body".utf8))
        try temporary.commit(as: folder + "/out.json")
        #expect(FileManager.default.contents(atPath: folder + "/out.json") == Data("body".utf8))
        #expect(Fixtures.files(in: folder) == ["out.json"])
        #expect(stat(folder + "/out.json", &info) == 0 && info.st_mode & 0o777 == SystemCall.creationMode)
        #expect(info.st_nlink == 1)
    }

    @Test(arguments: [true, false])
    func anUnnamedCommitReplacesARegularFileAtomicallyAndNothingElse(unnamed: Bool) throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let destination = folder + "/out.json"
        _ = FileManager.default.createFile(atPath: destination, contents: Data("old".utf8))
        var before = stat()
        #expect(stat(destination, &before) == 0)
        let temporary = try TemporaryFile.create(in: folder, unnamed: unnamed)
        try SystemCall.writeAll(temporary.descriptor, Array("new".utf8))
        try temporary.commit(as: destination, durable: true)
        temporary.discard()
        #expect(FileManager.default.contents(atPath: destination) == Data("new".utf8))
        var after = stat()
        #expect(stat(destination, &after) == 0 && after.st_ino != before.st_ino && after.st_nlink == 1)
        #expect(Fixtures.files(in: folder) == ["out.json"], "the random name the link went through is gone")

        let victim = folder + "/victim"
        _ = FileManager.default.createFile(atPath: victim, contents: Data("keep".utf8))
        try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: victim)
        try FileManager.default.createDirectory(atPath: folder + "/dir", withIntermediateDirectories: false)
        #expect(mkfifo(folder + "/fifo", 0o600) == 0)
        for name in ["link", "dir", "fifo"] {
            let other = try TemporaryFile.create(in: folder, unnamed: unnamed)
            #expect(throws: SystemError.self) { try other.commit(as: folder + "/" + name) }
            other.discard()
        }
        #expect(FileManager.default.contents(atPath: victim) == Data("keep".utf8))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: folder + "/link") == victim)
        #expect(!Fixtures.files(in: folder).contains { $0.hasSuffix(".part") })
    }

    @Test(arguments: [true, false])
    func linkNeverReplacesAndDiscardLeavesNothing(unnamed: Bool) throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try TemporaryFile.create(in: folder, unnamed: unnamed)
        try SystemCall.writeAll(first.descriptor, Array("a".utf8))
        try first.link(as: folder + "/a.jpg")
        #expect(first.isLinked)
        let second = try TemporaryFile.create(in: folder, unnamed: unnamed)
        try SystemCall.writeAll(second.descriptor, Array("b".utf8))
        #expect(throws: SystemError(code: EEXIST, operation: "store", path: folder + "/a.jpg")) {
            try second.link(as: folder + "/a.jpg")
        }
        #expect(!second.isLinked)
        first.discard()
        second.discard()
        #expect(FileManager.default.contents(atPath: folder + "/a.jpg") == Data("a".utf8))
        #expect(Fixtures.files(in: folder) == ["a.jpg"], "the temporary names (if any) are gone")
    }

    @Test func theFolderOfAPath() {
        #expect(TemporaryFile.folder(of: "a/b/c.json") == "a/b")
        #expect(TemporaryFile.folder(of: "c.json") == ".")
        #expect(TemporaryFile.folder(of: "/c.json") == "/")
    }
}
