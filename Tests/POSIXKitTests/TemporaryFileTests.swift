import Foundation
import RichPush
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

    @Test func outputFilesIgnoreAPlantedPartLinkAndNeverReplaceAFolder() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let victim = folder + "/victim"
        _ = FileManager.default.createFile(atPath: victim, contents: Data("keep".utf8))
        // The name the old code used for its temporary, planted as a link to another file.
        try FileManager.default.createSymbolicLink(atPath: folder + "/.report.json.part", withDestinationPath: victim)
        try OutputFile.write(Array("{}".utf8), to: folder + "/report.json")
        #expect(FileManager.default.contents(atPath: victim) == Data("keep".utf8))
        #expect(FileManager.default.contents(atPath: folder + "/report.json") == Data("{}".utf8))
        #expect(throws: SystemError.self) { try OutputFile.write([], to: folder) }
        #expect(throws: SystemError.self) { try OutputFile.write([], to: folder + "/") }
        #expect(Fixtures.files(in: folder).sorted() == [".report.json.part", "report.json", "victim"])
    }
}
