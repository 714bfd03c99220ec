import Foundation
import POSIXKit
import RichPush
import TestSupport
import Testing

@Suite struct AttachmentStoreTests {
    let folder: String
    let store: AttachmentStore

    init() throws {
        folder = try Fixtures.temporaryFolder()
        store = try AttachmentStore(folder: folder + "/out")
    }

    func fill(_ temporary: TemporaryFile, with bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.write(temporary.descriptor, $0.baseAddress, $0.count) }
    }

    @Test func storesUnderTheContentHashAndRemovesTheTemporary() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let temporary = try store.makeTemporary()
        fill(temporary, with: Array("hello".utf8))
        let stored = try store.commit(temporary, fileExtension: "jpg")
        temporary.discard()
        #expect(stored.sha256 == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
        #expect(stored.path == store.folder + "/2cf24dba5fb0a30e26e83b2ac5b9e29e.jpg")
        #expect(stored.bytes == 5)
        #expect(Fixtures.files(in: store.folder) == ["2cf24dba5fb0a30e26e83b2ac5b9e29e.jpg"])
    }

    @Test func reusesAnIdenticalFileAlreadyStored() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for _ in 0..<2 {
            let temporary = try store.makeTemporary()
            fill(temporary, with: Array("same".utf8))
            _ = try store.commit(temporary, fileExtension: "png")
            temporary.discard()
        }
        // The duplicate's temporary went back to the store's pool, emptied, for the next download.
        #expect(Fixtures.files(in: store.folder).filter { !$0.hasPrefix(".richpush-") }.count == 1)
        store.removeScratch()
        #expect(Fixtures.files(in: store.folder).count == 1)
    }

    @Test func neverWritesThroughALinkAtTheFinalName() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let target = folder + "/victim"
        _ = FileManager.default.createFile(atPath: target, contents: Data("keep".utf8))
        try FileManager.default.createSymbolicLink(
            atPath: store.folder + "/2cf24dba5fb0a30e26e83b2ac5b9e29e.jpg", withDestinationPath: target)
        let temporary = try store.makeTemporary()
        fill(temporary, with: Array("hello".utf8))
        #expect(throws: StoreError.self) { try store.commit(temporary, fileExtension: "jpg") }
        temporary.discard()
        store.removeScratch()
        #expect(FileManager.default.contents(atPath: target) == Data("keep".utf8))
        #expect(!Fixtures.files(in: store.folder).contains { $0.hasSuffix(".part") })
    }

    @Test(arguments: ["", "../x", "a/b", "jp g", ".jpg"])
    func refusesAnUnsafeExtension(fileExtension: String) throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let temporary = try store.makeTemporary()
        #expect(throws: StoreError.self) { try store.commit(temporary, fileExtension: fileExtension) }
        temporary.discard()
        store.removeScratch()
        #expect(Fixtures.files(in: store.folder).isEmpty, "the temporary is removed")
    }

    @Test func writesFilesAtomicallyInsideTheFolderOnly() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try store.writeAtomically(Array("{}".utf8), to: "sub/a.json")
        #expect(path == store.folder + "/sub/a.json")
        _ = try store.writeAtomically(Array("{\"v\":2}".utf8), to: "sub/a.json")
        #expect(FileManager.default.contents(atPath: path) == Data("{\"v\":2}".utf8))
        for name in ["../escape.json", "/etc/x", "a/../../b", ""] {
            #expect(throws: StoreError.self) { try store.writeAtomically([], to: name) }
        }
        #expect(Fixtures.files(in: store.folder) == ["sub/a.json"])
    }

    @Test func refusesAnOutputFolderThatIsAFile() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = FileManager.default.createFile(atPath: folder + "/file", contents: Data())
        #expect(throws: StoreError.self) { try AttachmentStore(folder: folder + "/file") }
    }
}

extension AttachmentStoreTests {
    @Test func reusesTheTemporariesOfDiscardedDownloads() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try store.makeTemporary()
        fill(first, with: Array("failed download".utf8))
        let path = first.path
        first.discard()
        let second = try store.makeTemporary()
        #expect(second.path == path, "the same file, reused")
        var info = stat()
        #expect(fstat(second.descriptor, &info) == 0 && info.st_size == 0, "and emptied")
        #expect(lseek(second.descriptor, 0, SEEK_CUR) == 0)
        second.discard()
        store.removeScratch()
        #expect(Fixtures.files(in: store.folder).isEmpty)
    }

    @Test func refusesAPlantedFileOfTheSameSizeWithOtherContent() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let final = store.folder + "/2cf24dba5fb0a30e26e83b2ac5b9e29e.jpg"
        _ = FileManager.default.createFile(atPath: final, contents: Data("HELLO".utf8))
        let temporary = try store.makeTemporary()
        fill(temporary, with: Array("hello".utf8))
        #expect(throws: StoreError.self) { try store.commit(temporary, fileExtension: "jpg") }
        do {
            _ = try store.commit(temporary, fileExtension: "jpg")
        } catch {
            #expect(error.message.contains("content differs"))
        }
        temporary.discard()
        store.removeScratch()
        #expect(FileManager.default.contents(atPath: final) == Data("HELLO".utf8), "the planted file is left alone")
    }

    /// A file the store wrote itself is trusted again only while it is unchanged: rewritten in place
    /// (same size, same inode) or swapped for another file, it is hashed and refused.
    @Test func checksAStoredFileAgainOnceItChanged() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func commitHello() throws -> StoredFile {
            let temporary = try store.makeTemporary()
            fill(temporary, with: Array("hello".utf8))
            defer { temporary.discard() }
            return try store.commit(temporary, fileExtension: "jpg")
        }
        let stored = try commitHello()
        #expect(try commitHello().path == stored.path, "the same content again: the stored file is reused")
        // Rewritten in place with other bytes of the same size (after a pause longer than a coarse
        // file-system clock tick, so the change time moves on kernels without fine-grained stamps).
        usleep(20_000)
        let handle = try #require(FileHandle(forWritingAtPath: stored.path))
        try handle.write(contentsOf: Data("HELLO".utf8))
        try handle.close()
        #expect(throws: StoreError.self) { try commitHello() }
        // Replaced by another file with the original bytes: checked, and accepted.
        try FileManager.default.removeItem(atPath: stored.path)
        _ = FileManager.default.createFile(atPath: stored.path, contents: Data("hello".utf8))
        #expect(try commitHello().sha256 == stored.sha256)
        store.removeScratch()
    }

    @Test func removesOnlyTheFilesItAddedWhenAsked() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recording = try AttachmentStore(folder: folder + "/out", recordsNewFiles: true)
        let existing = try recording.makeTemporary()
        fill(existing, with: Array("there before".utf8))
        let kept = try store.commit(existing, fileExtension: "png")
        let again = try recording.makeTemporary()
        fill(again, with: Array("there before".utf8))
        _ = try recording.commit(again, fileExtension: "png")
        let new = try recording.makeTemporary()
        fill(new, with: Array("new".utf8))
        let added = try recording.commit(new, fileExtension: "png")
        recording.removeNewFiles()
        recording.removeScratch()
        #expect(FileManager.default.fileExists(atPath: kept.path))
        #expect(!FileManager.default.fileExists(atPath: added.path))
    }

    /// Attachments and outputs take an unnamed temporary (O_TMPFILE) where the file system allows it,
    /// and the named `.part` path otherwise; both store the same files and leave no temporary.
    @Test(arguments: [true, false])
    func attachmentTemporariesAreUnnamedWhereAllowedAndNamedOtherwise(unnamed: Bool) throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try AttachmentStore(folder: folder + "/paths", unnamedTemporaries: unnamed)
        let temporary = try store.makeAttachmentTemporary()
        #expect(temporary.isUnnamed == unnamed, "the test folder's file system takes O_TMPFILE")
        #expect(Fixtures.files(in: store.folder).count == (unnamed ? 0 : 1))
        fill(temporary, with: Array("hello".utf8))
        // The sniffer can read it by its path, whichever kind it is.
        #expect(FileManager.default.contents(atPath: temporary.path) == Data("hello".utf8))
        let stored = try store.commit(temporary, fileExtension: "jpg")
        #expect(Fixtures.files(in: store.folder) == ["2cf24dba5fb0a30e26e83b2ac5b9e29e.jpg"])
        var info = stat()
        #expect(stat(stored.path, &info) == 0 && info.st_nlink == 1 && info.st_mode & 0o777 == SystemCall.creationMode)
        // The same content again: the stored file is kept, the new temporary leaves nothing.
        let again = try store.makeAttachmentTemporary()
        fill(again, with: Array("hello".utf8))
        #expect(try store.commit(again, fileExtension: "jpg").path == stored.path)
        store.removeScratch()
        #expect(Fixtures.files(in: store.folder) == ["2cf24dba5fb0a30e26e83b2ac5b9e29e.jpg"])
        // Outputs written through the store (payload files, summaries) go the same way.
        _ = try store.writeAtomically(Array("{}".utf8), to: "payloads/a.json")
        _ = try store.writeAtomically(Array("{ }".utf8), to: "payloads/a.json")
        #expect(FileManager.default.contents(atPath: store.folder + "/payloads/a.json") == Data("{ }".utf8))
        #expect(!Fixtures.files(in: store.folder).contains { $0.hasSuffix(".part") })
    }

    /// The pool holds named temporaries only (a shared download links its own by name): a reused
    /// one keeps its name, an unnamed one whose content was not kept is closed, not pooled.
    @Test func thePoolReusesNamedTemporariesAndAttachmentsTakeThemFirst() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let named = try store.makeTemporary()
        #expect(!named.isUnnamed)
        let path = named.path
        named.discard()
        let first = try store.makeAttachmentTemporary()
        #expect(first.path == path && !first.isUnnamed, "a pooled named temporary is cheaper than a new file")
        let second = try store.makeAttachmentTemporary()
        #expect(second.isUnnamed, "the pool is empty: a new unnamed one")
        second.discard()
        first.discard()
        let third = try store.makeAttachmentTemporary()
        let fourth = try store.makeAttachmentTemporary()
        #expect(third.path == path, "the named one went back to the pool")
        #expect(fourth.isUnnamed, "the unnamed one was closed, not pooled")
        third.discard()
        fourth.discard()
        store.removeScratch()
        #expect(Fixtures.files(in: store.folder).isEmpty)
    }

    @Test func aStoreErrorKeepsTheSystemErrorItCameFrom() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = FileManager.default.createFile(atPath: folder + "/file", contents: Data())
        do {
            _ = try AttachmentStore(folder: folder + "/file/out")
            Issue.record("a folder was made below a file")
        } catch {
            #expect(error.systemError?.code == ENOTDIR || error.systemError?.code == EEXIST, "\(error)")
            #expect(error.message == error.systemError?.message)
        }
    }
}
