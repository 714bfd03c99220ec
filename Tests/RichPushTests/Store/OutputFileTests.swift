import Foundation
import POSIXKit
import RichPush
import TestSupport
import Testing

/// Where an output path leads: `-`, streams and links are written through; regular files atomically.
@Suite struct OutputFileTests {
    @Test func eachKindOfPathHasItsTarget() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try OutputFile.target(of: "-") == .standardOutput)
        #expect(try OutputFile.target(of: folder + "/new.json") == .file(path: folder + "/new.json"))
        #expect(mkfifo(folder + "/fifo", 0o600) == 0)
        #expect(try OutputFile.target(of: folder + "/fifo") == .stream(path: folder + "/fifo"))
        #expect(try OutputFile.target(of: "/dev/null") == .stream(path: "/dev/null"))
        try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: folder + "/new.json")
        #expect(throws: SystemError.self, "a link to nothing is refused") {
            try OutputFile.target(of: folder + "/link")
        }
        #expect(throws: SystemError.self) { try OutputFile.target(of: folder + "/missing/x.json") }
        #expect(throws: SystemError.self) { try OutputFile.target(of: folder) }
    }

    @Test func aLinkIsWrittenThroughAndStaysALink() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = FileManager.default.createFile(atPath: folder + "/real.json", contents: Data("old, and longer".utf8))
        try FileManager.default.createSymbolicLink(atPath: folder + "/link.json", withDestinationPath: "real.json")
        try OutputFile.write(Array("new".utf8), to: folder + "/link.json")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: folder + "/link.json") == "real.json")
        #expect(FileManager.default.contents(atPath: folder + "/real.json") == Data("new".utf8))
        #expect(Fixtures.files(in: folder).sorted() == ["link.json", "real.json"])
    }

    @Test func nothingReachesAStreamUntilTheCommit() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A character device that keeps nothing: what matters is that the bytes wait, then go, with no temporary left.
        let pending = try OutputFile.open("/dev/null")
        try SystemCall.writeAll(pending.descriptor, Array("bytes".utf8))
        try pending.commit()
        pending.discard()
        let discarded = try OutputFile.open(folder + "/never.json")
        try SystemCall.writeAll(discarded.descriptor, Array("bytes".utf8))
        discarded.discard()
        #expect(Fixtures.files(in: folder).isEmpty, "a discarded output leaves nothing")
    }

    @Test func outputFilesIgnoreAPlantedPartLinkAndNeverReplaceAFolder() throws {
        let folder = try Fixtures.temporaryFolder()
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
